import { ByteReader } from '../shared/byte-reader.js';
import { ProtocolError } from '../types.js';
import {
  EVENT_ALARMS,
  EVENT_EXTRA_BYTES,
  INF_BAT,
  INF_CSQ,
  INF_GIR,
  INF_VER,
  PROTOCOL,
  RSP_COMPRESSED,
  RSP_GEO,
  RSP_LCB,
} from './gl200.constants.js';
import { Report } from './gl200.fields.js';

/**
 * The binary form of the Queclink reports (Traccar Gl200BinaryProtocolDecoder): `+RSP` positions
 * (one or more fixes, or compressed tracks), `+EVT` events with one fix, `+INF` device
 * information. Other binary frames (`+ACK`, `+HBD`, `+CRD`, ...) carry nothing stored.
 */
export interface BinaryOutcome {
  identity?: string;
  reports: Report[];
}

const imeiOf = (r: ByteReader): string => r.u64().toString().padStart(15, '0');

/** u16 year, u8 month, day, hour, minute, second (UTC) */
function timeOf(r: ByteReader): Date {
  const [y, mo, d, h, mi, s] = [r.u16(), r.u8(), r.u8(), r.u8(), r.u8(), r.u8()];
  const date = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) {
    throw new ProtocolError(PROTOCOL, `binary time ${y}-${mo}-${d} ${h}:${mi}:${s} is not valid`, r.buf);
  }
  return date;
}

/** hdop u8, speed u24 (0.1 km/h), azimuth u16, altitude s16, longitude s32, latitude s32 (1e-6 degrees), time, cell, reserved */
function readFix(r: ByteReader, report: Report): void {
  const hdop = r.u8();
  report.set('hdop', hdop);
  const speedKmh = r.bytes(3).readUIntBE(0, 3) * 0.1;
  const courseDeg = r.u16();
  const altitudeM = r.i16();
  const longitudeDeg = r.i32() * 1e-6;
  const latitudeDeg = r.i32() * 1e-6;
  report.gpsTime = timeOf(r);
  const [mcc, mnc, lac, cid] = [r.u16(), r.u16(), r.u16(), r.u16()];
  r.skip(1); // reserved
  if (Math.abs(latitudeDeg) <= 90 && Math.abs(longitudeDeg) <= 180) {
    report.location = {
      latitudeDeg,
      longitudeDeg,
      valid: hdop > 0,
      speedKmh,
      altitudeM,
      ...(courseDeg <= 360 && { courseDeg }),
    };
  }
  report.network.addCell(mcc, mnc, lac, cid);
}

/** two's complement of the low `bits` bits */
const signed = (value: number, bits: number): number => (value >= 2 ** (bits - 1) ? value - 2 ** bits : value);

/** big-endian bit fields of `bytes` */
function bitFields(bytes: Buffer, widths: readonly number[]): number[] {
  let value = 0n;
  for (const b of bytes) value = (value << 8n) | BigInt(b);
  let left = bytes.length * 8;
  return widths.map((w) => {
    left -= w;
    return Number((value >> BigInt(left)) & ((1n << BigInt(w)) - 1n));
  });
}

/**
 * Compressed track (+RSP type 100): each point is a full one (prefix 01: 2 attribute bits, fix
 * type, 12-bit speed 0.1 km/h, 9-bit azimuth, s32 longitude and latitude, u32 Unix time for the
 * first) or a difference (prefix 10: signed 7-bit speed and azimuth, 12-bit longitude, 11-bit
 * latitude, one second after the last); any other prefix is a one-byte invalid point.
 */
function readCompressed(r: ByteReader): Report[] {
  const count = r.u16();
  const reports: Report[] = [];
  let [speed, heading, lon, lat, time] = [0, 0, 0, 0, 0];
  for (let i = 0; i < count; i++) {
    if (time > 0) time += 1;
    r.need(1, 'compressed point');
    const kind = r.buf[r.offset] >> 6;
    if (kind === 1) {
      [, , speed, heading] = bitFields(r.bytes(3), [2, 1, 12, 9]);
      lon = r.i32();
      lat = r.i32();
      if (time === 0) time = r.u32();
    } else if (kind === 2) {
      const [, , ds, dh, dlon, dlat] = bitFields(r.bytes(5), [2, 1, 7, 7, 12, 11]);
      speed += signed(ds, 7);
      heading += signed(dh, 7);
      lon += signed(dlon, 12);
      lat += signed(dlat, 11);
    } else {
      r.skip(1); // an invalid point, or the same as the last
      continue;
    }
    const report = new Report();
    report.gpsTime = new Date(time * 1000);
    const [latitudeDeg, longitudeDeg] = [lat * 1e-6, lon * 1e-6];
    if (Math.abs(latitudeDeg) <= 90 && Math.abs(longitudeDeg) <= 180) {
      report.location = {
        latitudeDeg,
        longitudeDeg,
        valid: true,
        speedKmh: Math.max(0, speed * 0.1),
        ...(heading >= 0 && heading <= 360 && { courseDeg: heading }),
      };
    }
    reports.push(report);
  }
  return reports;
}

/** +RSP: type, mask u32, length u16, device type, protocol version u16, firmware u16, IMEI u64, battery %, power mV, ... */
function decodeRsp(r: ByteReader): BinaryOutcome {
  const type = r.u8();
  r.skip(4 + 2 + 1 + 2 + 2); // mask, length, device type, protocol version, firmware version
  const identity = imeiOf(r);
  const battery = r.u8();
  const power = r.u16();
  if (type === RSP_GEO) r.skip(2); // reserved
  r.skip(1); // motion status
  const satellites = r.u8();
  if (type !== RSP_COMPRESSED) r.skip(1); // index
  if (type === RSP_LCB) {
    r.skip(1); // phone number length
    for (let b = r.u8(); (b & 0x0f) !== 0x0f && (b & 0xf0) !== 0xf0; b = r.u8()); // BCD digits up to the F filler
  }
  if (type === RSP_COMPRESSED) return { identity, reports: readCompressed(r) };
  const count = r.u8();
  const reports: Report[] = [];
  for (let i = 0; i < count; i++) {
    const report = new Report();
    report.set('batteryLevel', battery);
    report.set('power', power / 1000);
    report.set('sat', satellites);
    readFix(r, report);
    reports.push(report);
  }
  return { identity, reports };
}

/** +EVT: the +RSP header, event data by type, then one fix */
function decodeEvt(r: ByteReader): BinaryOutcome {
  const type = r.u8();
  r.skip(4 + 2 + 1 + 2); // mask, length, device type, protocol version
  const report = new Report();
  report.set('versionFw', String(r.u16()));
  const identity = imeiOf(r);
  report.set('batteryLevel', r.u8());
  report.set('power', r.u16() / 1000);
  r.skip(1); // motion status
  report.set('sat', r.u8());
  r.skip(EVENT_EXTRA_BYTES[type] ?? 0);
  r.skip(1); // count
  readFix(r, report);
  report.set('event', type);
  report.addAlarm(EVENT_ALARMS[type]);
  return { identity, reports: [report] };
}

/** +INF: device information; the layout grows by type (VER, BAT, CSQ, GIR) */
function decodeInf(r: ByteReader): BinaryOutcome {
  const type = r.u8();
  r.skip(4 + 2); // mask, length
  const identity = imeiOf(r);
  const report = new Report();
  r.skip(1 + 2); // device type, protocol version
  report.set('versionFw', String(r.u16()));
  if (type === INF_VER) r.skip(6); // hardware, mcu versions, reserved
  r.skip(2); // motion status, reserved
  report.set('sat', r.u8());
  r.skip(1 + 7 + 1 + 1 + 2 + 2 + 2 + 4 + 1); // mode, last fix time, reserved, ?, report mask, ign and igf intervals, reserved
  if (type === INF_BAT) {
    report.set('charge', r.u8() !== 0);
    report.set('power', r.u16() / 1000);
    report.set('battery', r.u16() / 1000);
    report.set('batteryLevel', r.u8());
  }
  r.skip(10); // iccid
  if (type === INF_CSQ) {
    report.set('rssi', r.u8());
    r.skip(1);
  }
  r.skip(1 + 2); // time zone flags, offset
  if (type === INF_GIR) {
    r.skip(2); // gir trigger, cell number
    report.network.addCell(r.u16(), r.u16(), r.u16(), r.u16());
    r.skip(2); // ta, rx level
  }
  report.deviceTime = timeOf(r);
  return { identity, reports: [report] };
}

const HANDLERS: Readonly<Record<string, (r: ByteReader) => BinaryOutcome>> = {
  '+RSP': decodeRsp,
  '+BSP': decodeRsp, // buffered +RSP
  '+EVT': decodeEvt,
  '+BVT': decodeEvt, // buffered +EVT
  '+INF': decodeInf,
  '+BNF': decodeInf, // buffered +INF
};

export function decodeBinary(frame: Buffer): BinaryOutcome {
  const handler = HANDLERS[frame.toString('latin1', 0, 4)];
  if (!handler) return { reports: [] };
  const r = new ByteReader(PROTOCOL, frame, 4);
  return handler(r);
}
