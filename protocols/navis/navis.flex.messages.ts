/**
 * FLEX packets by type (manual "FLEX data packets"): ~A records from the archive, ~T one urgent
 * record, ~C the current state, and FLEX 2.0's extra records ~E (several) and ~X (one). Each is
 * answered at once: its two header bytes, the record count (~A, ~E) or the record's index
 * (u32 LE: ~T, ~C, ~X), then CRC-8 of those bytes.
 */
import { crc8Egts } from '../shared/crc.js';
import type { DecodeResult, DecodedMessage } from '../types.js';
import {
  FLEX_ARRAY,
  FLEX_CURRENT,
  FLEX_EXTRA_ARRAY,
  FLEX_EXTRA_SINGLE,
  FLEX_HEADER_BYTES,
  FLEX_SINGLE,
  PROTOCOL,
} from './navis.constants.js';
import { toMessage, type RecordState } from './navis.fields.js';
import { readExtraRecord, readFlexRecord } from './navis.flex.js';
import type { FlexLayout } from './navis.layout.js';
import { ByteReader } from '../shared/byte-reader.js';

/** A FLEX packet, its type read; `end` is where its CRC byte is. */
export interface FlexPacket {
  frame: Buffer;
  type: string;
  end: number;
  layout: FlexLayout;
}

type RecordReader = (r: ByteReader, layout: FlexLayout) => RecordState;

const flexRecord: RecordReader = readFlexRecord;
const extraRecord: RecordReader = (r) => readExtraRecord(r);

/** header, the given bytes, CRC-8 over both */
export function flexReply(type: string, data: Buffer): Buffer {
  const out = Buffer.concat([Buffer.from(type, 'latin1'), data, Buffer.alloc(1)]);
  out[out.length - 1] = crc8Egts(out, 0, out.length - 1);
  return out;
}

/** A count, then that many records: answered with the count. */
const array =
  (read: RecordReader) =>
  (p: FlexPacket): DecodeResult => {
    const r = new ByteReader(PROTOCOL, p.frame, FLEX_HEADER_BYTES, p.end);
    const count = r.u8();
    const messages: DecodedMessage[] = [];
    for (let i = 0; i < count; i++) {
      const message = toMessage(read(r, p.layout), p.frame);
      if (message) messages.push(message);
    }
    return { messages, replies: [flexReply(p.type, Buffer.from([count]))] };
  };

/**
 * One record, after the packet's own event index (not in ~C): answered with the record's index
 * (field 1), or the packet's when the layout leaves field 1 out.
 */
const single =
  (read: RecordReader, indexed: boolean) =>
  (p: FlexPacket): DecodeResult => {
    const r = new ByteReader(PROTOCOL, p.frame, FLEX_HEADER_BYTES, p.end);
    const packetIndex = indexed ? r.u32le() : 0;
    const s = read(r, p.layout);
    const index = Buffer.alloc(4);
    index.writeUInt32LE((typeof s.attributes.index === 'number' ? s.attributes.index : packetIndex) >>> 0);
    const message = toMessage(s, p.frame);
    return { messages: message ? [message] : [], replies: [flexReply(p.type, index)] };
  };

export const FLEX_HANDLERS: Readonly<Record<string, (p: FlexPacket) => DecodeResult>> = {
  [FLEX_ARRAY]: array(flexRecord),
  [FLEX_SINGLE]: single(flexRecord, true),
  [FLEX_CURRENT]: single(flexRecord, false),
  [FLEX_EXTRA_ARRAY]: array(extraRecord),
  [FLEX_EXTRA_SINGLE]: single(extraRecord, true),
};
