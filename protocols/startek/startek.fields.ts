import { ProtocolError } from '../types.js';
import { PROTOCOL } from './startek.constants.js';

/** A field that must be a decimal integer: anything else makes the frame unreadable, as in Traccar. */
export function int(value: string, what: string): number {
  if (!/^-?\d{1,15}$/.test(value)) throw new ProtocolError(PROTOCOL, `${what} "${value.slice(0, 20)}" is no integer`);
  return Number(value);
}

/** A field that must be a decimal number (`12`, `0.5`, `-3.25`). */
export function decimal(value: string, what: string): number {
  if (!/^-?(\d+\.?\d*|\.\d+)$/.test(value) || !Number.isFinite(Number(value)))
    throw new ProtocolError(PROTOCOL, `${what} "${value.slice(0, 20)}" is no number`);
  return Number(value);
}

/** A field that must be hexadecimal. */
export function hex(value: string, what: string): number {
  if (!/^[0-9A-Fa-f]{1,12}$/.test(value))
    throw new ProtocolError(PROTOCOL, `${what} "${value.slice(0, 20)}" is no hex`);
  return parseInt(value, 16);
}
