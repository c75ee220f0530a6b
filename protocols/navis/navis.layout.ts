/**
 * The FLEX record layout a *>FLEX negotiation declares: which fields a record carries and so how
 * long it is. Read by the splitter (to cut FLEX packets) and by the decoder (to read them), from
 * the same bytes, so both agree.
 */
import { FLEX_FIELD_BYTES, FLEX_PROTOCOL } from './navis.constants.js';

/** What the decoder keeps in its session (plain data: it is set again, never changed, by a repeat) */
export interface FlexLayout {
  protocolVersion: number;
  structVersion: number;
  /** how many fields the bitfield describes */
  bitfieldSize: number;
  /** the bitfield as sent, hex; bit 7 of its first byte is field 1 */
  bitfield: string;
  /** bytes of one record: the sizes of every field present */
  dataSize: number;
}

/** Whether field `index` (field number - 1) is present: most significant bit first. */
export function hasField(bits: Buffer, index: number): boolean {
  return ((bits[index >> 3] >> (7 - (index & 7))) & 1) === 1;
}

/**
 * Reads a negotiation from the bytes after "*>FLEX": protocol 0xB0, protocol version, struct
 * version, bitfield size (fields), then ceil(size / 8) bitfield bytes. Undefined when it is no
 * FLEX negotiation (another protocol byte, more fields than FLEX has, the bitfield cut short):
 * Traccar neither answers nor changes the layout then.
 */
export function readFlexNegotiation(body: Buffer): FlexLayout | undefined {
  if (body.length < 4 || body[0] !== FLEX_PROTOCOL) return undefined;
  const bitfieldSize = body[3];
  if (bitfieldSize > FLEX_FIELD_BYTES.length) return undefined;
  const bits = body.subarray(4, 4 + Math.ceil(bitfieldSize / 8));
  if (bits.length < Math.ceil(bitfieldSize / 8)) return undefined;
  let dataSize = 0;
  for (let i = 0; i < bitfieldSize; i++) if (hasField(bits, i)) dataSize += FLEX_FIELD_BYTES[i];
  return {
    protocolVersion: body[1],
    structVersion: body[2],
    bitfieldSize,
    bitfield: bits.toString('hex'),
    dataSize,
  };
}
