import { ByteReader } from '../shared/byte-reader.js';
import { ProtocolError, type DecodeResult } from '../types.js';
import { ALERT_ALARMS, ALERT_DRIVER_ID, PROTOCOL } from './suntech.constants.js';
import { Fields, Report } from './suntech.fields.js';

const bit = (mask: number, n: number): boolean => ((mask >>> n) & 1) === 1;

/** a sign-and-magnitude coordinate: bit 31 is the sign, the rest millionths of a degree */
const signed = (raw: number): number => ((raw & 0x80000000) !== 0 ? -(raw & 0x7fffffff) : raw) / 1e6;

/**
 * Binary universal report (SuntechProtocolDecoder.decodeBinary): `<type> | u16 length | 5-byte id |
 * u24 field mask | fields…`, the fields of the text universal report in binary. Type 0x82 is an
 * alert: its alert id is mapped like ALT's; alert 59 carries an 8-byte driver id.
 */
export function decodeBinaryReport(frame: Buffer): DecodeResult {
  const b = new ByteReader(PROTOCOL, frame);
  const type = b.u8();
  b.u16(); // length
  const identity = b.bytes(5, 'device id').toString('hex');
  const r = new Report(new Fields([], frame));
  const mask = (b.u8() << 16) | b.u16();
  if (bit(mask, 1)) b.u8(); // model
  if (bit(mask, 2)) r.set('versionFw', [b.u8(), b.u8(), b.u8()].join('.'));
  if (bit(mask, 3) && b.u8() === 0) r.set('archive', true);
  if (bit(mask, 4) && bit(mask, 5)) {
    const [yy, mo, dd, hh, mi, ss] = [b.u8(), b.u8(), b.u8(), b.u8(), b.u8(), b.u8()];
    if (mo >= 1 && mo <= 12 && dd >= 1 && dd <= 31 && hh <= 23 && mi <= 59 && ss <= 59)
      r.fixTime = new Date(Date.UTC(2000 + yy, mo - 1, dd, hh, mi, ss));
    else r.f.fail('date or time out of range');
  }
  if (bit(mask, 6)) b.u32(); // cell
  if (bit(mask, 7)) b.u16(); // mcc
  if (bit(mask, 8)) b.u16(); // mnc
  if (bit(mask, 9)) b.u16(); // lac
  if (bit(mask, 10)) r.set('rssi', b.u8());
  const lat = bit(mask, 11) ? signed(b.u32()) : undefined;
  const lon = bit(mask, 12) ? signed(b.u32()) : undefined;
  if (lat !== undefined && lon !== undefined) r.coordinates(lat, lon);
  if (bit(mask, 13)) r.speedKmh = b.u16() / 100;
  if (bit(mask, 14)) r.course(b.u16() / 100);
  if (bit(mask, 15)) {
    r.satellites = b.u8();
    r.set('sat', r.satellites);
  }
  if (bit(mask, 16)) r.valid = b.u8() > 0;
  if (bit(mask, 17)) {
    const input = b.u8();
    r.set('ignition', bit(input, 0));
    r.set('input', input);
  }
  if (bit(mask, 18)) r.set('output', b.u8());
  let alertId = 0;
  if (bit(mask, 19)) {
    alertId = b.u8();
    if (type === 0x82) r.alarm(ALERT_ALARMS[alertId]);
  }
  if (bit(mask, 20)) b.u16(); // alert modifier
  if (bit(mask, 21) && alertId === ALERT_DRIVER_ID) r.set('driverUniqueId', b.bytes(8).toString('hex'));
  return { identity, messages: [r.message()], replies: [] };
}

/**
 * Binary "zip" report (`02 | u16 length | type | 5-byte id | …`): its layout is in no document at
 * hand, so it is a frame this decoder cannot read (logged and shown as malformed, nothing stored),
 * naming its device: the id's first 9 digits, as Traccar's decodeZip names it.
 */
export function decodeZipReport(frame: Buffer): never {
  const b = new ByteReader(PROTOCOL, frame);
  b.skip(4);
  const identity = b.bytes(5, 'device id').toString('hex').slice(0, 9);
  throw new ProtocolError(PROTOCOL, 'suntech zip report: layout unknown, not decoded', frame, { identity });
}
