import type { AttributeValue, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import { ByteReader } from '../shared/byte-reader.js';
import { NetworkInfo } from '../shared/network.js';
import { EVENT_ALARMS, PROTOCOL } from './meitrack.constants.js';

/** seconds from 1970 to 2000-01-01, the epoch of binary Meitrack times */
const EPOCH_2000_S = 946_684_800;

/** a parameter id: one byte, or two (big-endian) when the first is 0xFE */
const paramId = (r: ByteReader): number => (r.peek() === 0xfe ? r.u16() : r.u8());

function withEvent(m: DecodedMessage, event: number): void {
  m.attributes.event = event;
  const alarm = EVENT_ALARMS[event];
  if (alarm && !m.alarms.includes(alarm)) m.alarms.push(alarm);
}

function checkedCoordinates(lat: number, lon: number, frame: Buffer): void {
  if (!(Math.abs(lat) <= 90 && Math.abs(lon) <= 180))
    throw new ProtocolError(PROTOCOL, `coordinates out of range (${lat}, ${lon})`, frame);
}

/** The batch's data: after `$$<flag><len>,<imei>,<CCC|CCE>,`, before the `*XX` checksum. */
export interface BinaryBody {
  frame: Buffer;
  start: number;
  end: number;
}

/**
 * CCC batch (Meitrack "Setting the Data Compression Format - CCC"; MeitrackProtocolDecoder.decodeBinaryC):
 * u16 protocol version, u16 packet length, u32 remaining cache, then 52-byte little-endian packets.
 */
export function decodeCcc(b: BinaryBody): DecodedMessage[] {
  const r = new ByteReader(PROTOCOL, b.frame, b.start, b.end);
  r.u16le(); // compression protocol version
  r.u16le(); // packet length
  r.u32le(); // remaining cache
  const out: DecodedMessage[] = [];
  while (r.remaining >= 52) {
    const m: DecodedMessage = { alarms: [], attributes: {} };
    withEvent(m, r.u8());
    const lat = r.i32le() / 1e6;
    const lon = r.i32le() / 1e6;
    checkedCoordinates(lat, lon, b.frame);
    m.fixTime = new Date((EPOCH_2000_S + r.u32le()) * 1000);
    const valid = r.u8() === 1;
    const satellites = r.u8();
    const rssi = r.u8();
    const speedKmh = r.u16le();
    const courseDeg = r.u16le();
    m.attributes.hdop = r.u16le() * 0.1;
    const altitudeM = r.u16le();
    m.location = {
      latitudeDeg: lat,
      longitudeDeg: lon,
      valid,
      speedKmh,
      courseDeg: courseDeg <= 360 ? courseDeg : courseDeg % 360,
      altitudeM,
      satellites,
    };
    m.attributes.sat = satellites;
    m.attributes.rssi = rssi;
    m.attributes.odometer = r.u32le();
    m.attributes.runtime = r.u32le();
    const network = new NetworkInfo();
    const [mcc, mnc, lac, cid] = [r.u16le(), r.u16le(), r.u16le(), r.u16le()];
    if (mcc || mnc || lac || cid) network.addCell(mcc, mnc, lac, cid, rssi);
    network.applyTo(m.attributes);
    m.attributes.status = r.u16le();
    m.attributes.adc1 = r.u16le();
    m.attributes.battery = r.u16le() * 0.01;
    m.attributes.power = r.u16le() * 0.01; // Traccar keeps the raw value; hundredths of a volt as the battery beside it
    r.u32le(); // geofence
    out.push(m);
  }
  return out;
}

/** What a CCE packet says of its fix, gathered before it becomes a location (only with both coordinates). */
interface Fix {
  lat?: number;
  lon?: number;
  valid?: boolean;
  satellites?: number;
  speedKmh?: number;
  courseDeg?: number;
  altitudeM?: number;
}

type Setter = (m: DecodedMessage, r: ByteReader, fix: Fix) => void;
const set =
  (key: string, read: (r: ByteReader) => AttributeValue): Setter =>
  (m, r) => {
    m.attributes[key] = read(r);
  };

/** CCE one-byte parameters (MeitrackProtocolDecoder.decodeBinaryE; Meitrack CCE parameter table) */
const CCE_U8: Readonly<Record<number, Setter>> = {
  0x01: (m, r) => withEvent(m, r.u8()),
  0x05: (_m, r, fix) => {
    fix.valid = r.u8() > 0;
  },
  0x06: (m, r, fix) => {
    fix.satellites = r.u8();
    m.attributes.sat = fix.satellites;
  },
  0x07: set('rssi', (r) => r.u8()),
  0x14: set('output', (r) => r.u8()),
  0x15: set('input', (r) => r.u8()),
  0x47: (m, r) => {
    const state = r.u8(); // 0 unknown, 1 unlocked, 2 locked
    if (state > 0) m.attributes.lock = state === 2;
  },
  0x97: set('throttle', (r) => r.u8()),
  0x9d: set('fuel', (r) => r.u8()),
  0xfe69: set('batteryLevel', (r) => r.u8()),
};

/** CCE two-byte parameters */
const CCE_U16: Readonly<Record<number, Setter>> = {
  0x08: (_m, r, fix) => {
    fix.speedKmh = r.u16le();
  },
  0x09: (_m, r, fix) => {
    const course = r.u16le();
    fix.courseDeg = course <= 360 ? course : course % 360;
  },
  0x0a: set('hdop', (r) => r.u16le()),
  0x0b: (_m, r, fix) => {
    fix.altitudeM = r.i16le();
  },
  0x16: set('adc1', (r) => r.u16le() * 0.01),
  0x17: set('adc2', (r) => r.u16le() * 0.01),
  0x19: set('battery', (r) => r.u16le() * 0.01),
  0x1a: set('power', (r) => r.u16le() * 0.01),
  0x29: set('fuel', (r) => r.u16le() * 0.01),
  0x40: (m, r) => withEvent(m, r.u16le()),
  0x91: set('obdSpeed', (r) => r.u16le()),
  0x92: set('obdSpeed', (r) => r.u16le()),
  0x98: set('fuelUsed', (r) => r.u16le()),
  0x99: set('rpm', (r) => r.u16le()),
  0x9c: set('coolantTemp', (r) => r.u16le()),
  0x9f: set('temp1', (r) => r.u16le()),
  0xc9: set('fuelConsumption', (r) => r.u16le()),
};

/** CCE four-byte parameters */
const CCE_U32: Readonly<Record<number, Setter>> = {
  0x02: (_m, r, fix) => {
    fix.lat = r.i32le() / 1e6;
  },
  0x03: (_m, r, fix) => {
    fix.lon = r.i32le() / 1e6;
  },
  0x04: (m, r) => {
    m.fixTime = new Date((EPOCH_2000_S + r.u32le()) * 1000);
  },
  0x0c: set('odometer', (r) => r.u32le()),
  0x0d: set('runtime', (r) => r.u32le()),
  0x25: set('driverUniqueId', (r) => String(r.u32le())),
  0x9b: set('obdOdometer', (r) => r.u32le()),
  0xa0: set('fuelUsed', (r) => r.u32le() * 0.001),
  0xa2: set('fuelConsumption', (r) => r.u32le() * 0.01),
  /** engine hours in minutes; kept in ms as `hours` is elsewhere */
  0xfef4: set('hours', (r) => r.u32le() * 60_000),
};

const hex = (b: Buffer): string => b.toString('hex').toUpperCase();

/** CCE variable-length parameters: `r` holds exactly the parameter's bytes */
function cceVariable(id: number, m: DecodedMessage, r: ByteReader, network: NetworkInfo): void {
  if (id >= 0x2a && id <= 0x31) {
    r.u8(); // sensor label
    m.attributes[`temp${id - 0x2a}`] = r.i16le() * 0.01;
  } else if (id >= 0x1d && id <= 0x25) {
    const mac = [...r.bytes(6)].map((x) => x.toString(16).padStart(2, '0')).join(':');
    network.addWifi(mac, r.i16le());
  } else if ([0x0e, 0x0f, 0x10, 0x12, 0x13].includes(id)) {
    const [mcc, mnc, lac] = [r.u16le(), r.u16le(), r.u16le()];
    const cid = r.u32le();
    network.addCell(mcc, mnc, lac, cid, r.i16le());
  } else if (id === 0xfe31) {
    const alarmProtocol = r.u8();
    m.attributes.alarmType = r.u8();
    if (alarmProtocol === 0x02 && r.remaining > 1) {
      // a camera alarm names its picture: `yyyyMMddHHmmss_CH1_x.jpg`, filed under `yyyy-MM-dd/`
      const file = r.bytes(r.remaining).toString('latin1');
      const day = /^(\d{4})(\d{2})(\d{2})/.exec(file);
      m.attributes.image = day ? `${day[1]}-${day[2]}-${day[3]}/${file}` : file;
    }
  } else if (id === 0xfe73) {
    r.u8(); // version
    m.attributes.tagName = r.bytes(r.u8()).toString('latin1');
    m.attributes.tagMac = hex(r.bytes(6));
    m.attributes.tagBattery = r.u8();
    m.attributes.tagTemp = r.i16le() / 256;
    m.attributes.tagHumidity = r.i16le() / 256;
  } else if (id === 0xfea8) {
    for (let k = 1; k <= 3; k++) {
      const present = r.u8() > 0;
      const level = r.u8();
      if (present) m.attributes[k === 1 ? 'batteryLevel' : `battery${k}Level`] = level;
    }
  }
}

/**
 * CCE batch (Meitrack "CCE" binary format; MeitrackProtocolDecoder.decodeBinaryE): u32 remaining
 * cache, u16 packet count, then per packet u16 length (from the index on), u16 index and four
 * parameter groups (1-, 2-, 4-byte values, then id + length + bytes). A packet is read within its
 * own length, so an unknown parameter cannot shift the next one. Event codes become alarms as in
 * AAA reports.
 */
export function decodeCce(b: BinaryBody): DecodedMessage[] {
  const r = new ByteReader(PROTOCOL, b.frame, b.start, b.end);
  const remainingCache = r.u32le();
  const count = r.u16le();
  const out: DecodedMessage[] = [];
  for (let i = 0; i < count; i++) {
    const p = r.sub(r.u16le());
    const m: DecodedMessage = { alarms: [], attributes: { index: p.u16le(), cacheRemaining: remainingCache } };
    const fix: Fix = {};
    for (const table of [CCE_U8, CCE_U16, CCE_U32]) {
      const size = table === CCE_U8 ? 1 : table === CCE_U16 ? 2 : 4;
      for (let n = p.u8(), j = 0; j < n; j++) {
        const id = paramId(p);
        const setter = table[id];
        if (setter) setter(m, p.sub(size), fix);
        else p.sub(size);
      }
    }
    const network = new NetworkInfo();
    for (let n = p.u8(), j = 0; j < n; j++) {
      const id = paramId(p);
      cceVariable(id, m, p.sub(p.u8()), network);
    }
    network.applyTo(m.attributes);
    if (fix.lat !== undefined && fix.lon !== undefined) {
      checkedCoordinates(fix.lat, fix.lon, b.frame);
      const { lat, lon, valid, ...rest } = fix;
      m.location = { latitudeDeg: lat, longitudeDeg: lon, valid: valid ?? false, ...rest };
    }
    out.push(m);
  }
  return out;
}
