/**
 * What binary and text records share: the message being built, the cell a custom form reports
 * piece by piece, and the NUL-ended texts of binary records.
 */
import type { Alarm } from '../../core/model/alarm.js';
import { NetworkInfo } from '../shared/network.js';
import type { ByteReader } from '../shared/byte-reader.js';
import type { AttributeValue, DecodedMessage } from '../types.js';

/** The cell a custom form reports piece by piece (%GQ, %CE, %LC, %CN). */
export interface CellParts {
  signal?: number;
  cid?: number;
  lac?: number;
  mcc?: number;
  mnc?: number;
}

/** One record being decoded: the message and the cell its custom fields describe. */
export interface RecordState {
  m: DecodedMessage;
  cell: CellParts;
}

export const newRecord = (): RecordState => ({ m: { alarms: [], attributes: {} }, cell: {} });

/** sets an attribute; a missing or empty text is left out, as Traccar leaves it out */
export function put(s: RecordState, key: string, value: AttributeValue | undefined): void {
  if (value === undefined || value === '') return;
  s.m.attributes[key] = value;
}

export function alarm(s: RecordState, a: Alarm | undefined): void {
  if (a !== undefined && !s.m.alarms.includes(a)) s.m.alarms.push(a);
}

export function satellites(s: RecordState, n: number): void {
  s.m.attributes.sat = n;
  if (s.m.location) s.m.location.satellites = n;
}

export function altitude(s: RecordState, metres: number): void {
  if (s.m.location) s.m.location.altitudeM = metres;
}

/**
 * The cell, once the form gave all of it, as the `network` attribute; a cell known only by its
 * signal gives `rssi`. Binary forms take a cell id of 0 for none (`zeroCidIsNone`), text forms do not.
 */
export function finishCell(s: RecordState, zeroCidIsNone: boolean): void {
  const c = s.cell;
  const complete =
    c.mcc !== undefined &&
    c.mnc !== undefined &&
    c.lac !== undefined &&
    c.cid !== undefined &&
    !(zeroCidIsNone && c.cid === 0);
  if (complete) {
    const network = new NetworkInfo();
    network.addCell(c.mcc, c.mnc, c.lac!, c.cid!, c.signal);
    network.applyTo(s.m.attributes);
  } else if (c.signal !== undefined) s.m.attributes.rssi = c.signal;
}

/**
 * A NUL-ended text (AtrackProtocolDecoder.readString): undefined when empty; with no NUL left the
 * next byte is taken for its end, as the reference does.
 */
export function readCString(r: ByteReader): string | undefined {
  const start = r.offset;
  const zero = r.buf.indexOf(0, start);
  let text: string | undefined;
  if (zero > start && zero < start + r.remaining) text = r.bytes(zero - start).toString('latin1');
  r.skip(1);
  return text;
}
