import { ProtocolError } from '../types.js';
import { PROTOCOL } from './t55.constants.js';

/**
 * The lines that only name their device, by how they start, and where the name sits in them
 * (T55ProtocolDecoder.decode). `$GPFID` is apart: it also releases a held fix.
 */
const NAMING: readonly { prefix: string; id: (s: string) => string | undefined }[] = [
  { prefix: '$PGID', id: (s) => between(s, 6, s.length - 3) }, // $PGID,<id>*cs
  { prefix: '$DEVID', id: (s) => between(s, 7, s.lastIndexOf('*')) }, // $DEVID,<id>*cs
  { prefix: '$PCPTI', id: (s) => between(s, 7, s.indexOf(',', 7)) }, // $PCPTI,<id>,...
  { prefix: 'IMEI', id: (s) => between(s, 5, s.length) }, // IMEI <id>
  { prefix: '$IMEI', id: (s) => between(s, 6, s.length) }, // $IMEI=<id>
  { prefix: '$PSIWMDID', id: (s) => between(s, 10, s.lastIndexOf('*')) }, // $PSIWMDID,<id>*cs
  { prefix: '$CONNECT,', id: (s) => between(s, 9, s.indexOf(',', 9)) }, // $CONNECT,<id>,NETWORK,...
];

/** `s` from `start` to `end`; a line too short for its layout cannot be read */
function between(s: string, start: number, end: number): string {
  if (end < start || start > s.length)
    throw new ProtocolError(PROTOCOL, `"${s.slice(0, 24)}" is too short to name a device`);
  return s.slice(start, end);
}

/** A line that only names its device: the name (may be ''), or undefined for any other line. */
export function namingLine(sentence: string): string | undefined {
  for (const n of NAMING) if (sentence.startsWith(n.prefix)) return n.id(sentence);
  if (/^[0-9A-F]+$/.test(sentence)) return sentence; // a bare hex id: `358244017671308`, `086415031C20`
  return undefined;
}

/** `$GPFID,<id>` (Maxon): names the device and releases the fix held before it */
export function gpfidLine(sentence: string): string | undefined {
  return sentence.startsWith('$GPFID') ? between(sentence, 7, sentence.length) : undefined;
}

/**
 * A device id written before the sentence: `<id>$GPRMC…`, `<id>,$GPRMC…` or `x/<id>/$GPRMC…`.
 * Returns the id ('' when there is none) and the sentence from its `$`.
 */
export function splitPrefix(line: string): { id?: string; sentence: string } {
  if (line.startsWith('$') || !line.includes('$')) return { sentence: line };
  const at = line.indexOf('$');
  let id = line.slice(0, at);
  if (id.endsWith(',')) id = id.slice(0, -1);
  else if (id.endsWith('/')) id = id.slice(id.indexOf('/') + 1, -1);
  return { id, sentence: line.slice(at) };
}
