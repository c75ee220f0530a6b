import { isAlarm } from '../shared/alarms.js';
import { NetworkInfo } from '../shared/network.js';
import { knotsToKmh, mpsToKmh } from '../shared/units.js';
import type { AttributeValue, DecodedLocation, DecodedMessage } from '../types.js';
import {
  LOGGING_CODE_ALARMS,
  LOGGING_CODE_RANGES,
  LOGGING_CODES,
  MAX_ATTRIBUTES,
  STATUS_BAD_REQUEST,
  STATUS_OK,
} from './osmand.constants.js';

/** What one request decodes to, before it becomes an HttpDecodeResult. */
export interface Outcome {
  identity?: string;
  messages: DecodedMessage[];
  status: number;
  warnings: string[];
}

/** Java `Double.parseDouble` for the forms trackers send; undefined for anything else */
export function parseNumber(value: string): number | undefined {
  if (!/^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(value)) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/** Java `Integer.parseInt` */
function parseInteger(value: string, radix = 10): number | undefined {
  const pattern = radix === 16 ? /^[+-]?[0-9a-fA-F]+$/ : /^[+-]?\d+$/;
  return pattern.test(value) ? Number.parseInt(value, radix) : undefined;
}

/** a free-form key becomes an attribute; `__proto__` never does */
function setAttribute(
  attributes: Record<string, AttributeValue>,
  key: string,
  value: AttributeValue,
  warnings: string[],
): void {
  if (key === '__proto__') return;
  if (!(key in attributes) && Object.keys(attributes).length >= MAX_ATTRIBUTES) {
    if (!warnings.includes('too many attributes')) warnings.push('too many attributes');
    return;
  }
  attributes[key] = value;
}

/** ISO-8601 (UTC unless it names a zone), unix seconds or milliseconds, or `yyyy-MM-dd HH:mm:ss` (UTC) */
export function parseTimestamp(value: string): Date | undefined {
  if (value.length === 12 && /^\d{12}$/.test(value)) {
    const device = parseDeviceDate(value);
    if (device) return device;
  }
  if (/^-?\d+$/.test(value)) {
    const n = Number(value);
    return new Date(n < 2147483647 ? n * 1000 : n);
  }
  let iso = value.trim();
  if (!iso.includes('T')) {
    // Traccar reads this form in the server's zone; a pure decoder has none, so UTC
    if (!/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(iso)) return undefined;
    iso = iso.replace(' ', 'T');
  }
  if (/T.*[+-]\d{2}$/.test(iso))
    iso += ':00'; // `+01` -> `+01:00`
  else if (!/(Z|[+-]\d{2}:?\d{2})$/i.test(iso)) iso += 'Z';
  const t = Date.parse(iso);
  return Number.isFinite(t) ? new Date(t) : undefined;
}

/** `ddMMyyHHmmss` in UTC */
export function parseDeviceDate(value: string): Date | undefined {
  const m = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(value);
  if (!m) return undefined;
  const [day, month, year, hour, minute, second] = m.slice(1).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return undefined;
  return new Date(Date.UTC(2000 + year, month - 1, day, hour, minute, second));
}

function loggingCode(value: string, m: DecodedMessage): void {
  m.attributes.lc = value;
  const code = parseInteger(value, 16);
  if (code === undefined) return;
  const range = LOGGING_CODE_RANGES.find(([from, to]) => code >= from && code <= to);
  const description = LOGGING_CODES[code] ?? (range ? `${range[2]}${code - range[0] + range[3]}` : undefined);
  if (description) m.attributes.lcDescription = description;
  const alarm = LOGGING_CODE_ALARMS[code];
  if (alarm && !m.alarms.includes(alarm)) m.alarms.push(alarm);
}

// ---- query string / form (OsmAnd, Traccar Client) ----

interface QueryState {
  id?: string;
  m: DecodedMessage;
  fields: Partial<DecodedLocation>;
  valid: boolean;
  lat?: number;
  lon?: number;
  net: NetworkInfo;
  warnings: string[];
  /** why the request is a bad request */
  error?: string;
}

type ParamHandler = (value: string, s: QueryState, key: string) => void;

const number =
  (apply: (n: number, s: QueryState) => void): ParamHandler =>
  (value, s, key) => {
    const n = parseNumber(value);
    if (n === undefined) s.warnings.push(`${key} is not a number`);
    else apply(n, s);
  };

const coordinate =
  (axis: 'lat' | 'lon'): ParamHandler =>
  (value, s, key) => {
    const n = parseNumber(value);
    if (n === undefined) s.error ??= `${key} is not a number`;
    else s[axis] = n;
  };

const course: ParamHandler = number((n, s) => {
  if (n >= 0 && n <= 360) s.fields.courseDeg = n;
});

/** one handler per query parameter (Traccar `OsmAndProtocolDecoder.decodeQuery`); others become attributes */
const PARAMS: Readonly<Record<string, ParamHandler>> = {
  id: (v, s) => {
    s.id ??= v;
  },
  i: (v, s) => {
    s.id ??= v;
  },
  deviceid: (v, s) => {
    s.id ??= v;
  },
  notificationToken: () => {}, // a push token for the device record, not a position attribute
  v: (v, s) => {
    s.valid = v.toUpperCase() === 'A';
  },
  valid: (v, s) => {
    s.valid = v.toLowerCase() === 'true' || v === '1';
  },
  timestamp: (v, s) => {
    const time = parseTimestamp(v);
    if (time && Number.isFinite(time.getTime())) s.m.fixTime = time;
    else s.warnings.push(`timestamp ${v} is not a time`);
  },
  d: (v, s) => {
    const time = parseDeviceDate(v);
    if (time) s.m.fixTime = time;
    else s.warnings.push(`d ${v} is not ddMMyyHHmmss`);
  },
  lat: coordinate('lat'),
  la: coordinate('lat'),
  lon: coordinate('lon'),
  lo: coordinate('lon'),
  location: (v, s) => {
    const [lat, lon] = v.split(',').map(parseNumber);
    if (lat === undefined || lon === undefined) s.error ??= 'location is not "lat,lon"';
    else Object.assign(s, { lat, lon });
  },
  cell: (v, s) => {
    const p = v.split(',').map((x) => parseInteger(x.trim()));
    if (p.length < 4 || p.slice(0, 5).some((x) => x === undefined))
      s.warnings.push(`cell ${v} is not mcc,mnc,lac,cid[,rssi]`);
    else s.net.addCell(p[0], p[1], p[2]!, p[3]!, p.length > 4 ? p[4] : undefined);
  },
  wifi: (v, s) => {
    const [mac, rssi] = v.split(',');
    const signal = rssi === undefined ? undefined : parseInteger(rssi.trim());
    if (!mac || signal === undefined) s.warnings.push(`wifi ${v} is not mac,rssi`);
    else s.net.addWifi(mac.replaceAll('-', ':'), signal);
  },
  // knots, as Traccar Client and the OsmAnd protocol send it (Traccar's `osmand.speed` default)
  speed: number((n, s) => {
    if (n >= 0) s.fields.speedKmh = knotsToKmh(n);
  }),
  s: number((n, s) => {
    if (n >= 0) s.fields.speedKmh = knotsToKmh(n);
  }),
  bearing: course,
  heading: course,
  altitude: number((n, s) => {
    s.fields.altitudeM = n;
  }),
  al: number((n, s) => {
    s.fields.altitudeM = n;
  }),
  accuracy: number((n, s) => {
    s.fields.accuracyM = n;
  }),
  p: number((n, s) => {
    s.fields.accuracyM = n;
  }),
  prec: number((n, s) => {
    s.fields.accuracyM = n;
  }),
  hdop: number((n, s) => {
    s.m.attributes.hdop = n;
  }),
  h: number((n, s) => {
    s.m.attributes.hdop = n;
  }),
  batt: number((n, s) => {
    s.m.attributes.batteryLevel = n;
  }),
  driverUniqueId: (v, s) => {
    s.m.attributes.driverUniqueId = v;
  },
  charge: (v, s) => {
    s.m.attributes.charge = v.toLowerCase() === 'true';
  },
  in: (v, s) => {
    s.m.attributes.input = v;
  },
  input: (v, s) => {
    s.m.attributes.input = v;
  },
  sa: (v, s, key) => satellites(v, s, key),
  sat: (v, s, key) => satellites(v, s, key),
  LC: (v, s) => loggingCode(v, s.m),
  ainput: (v, s, key) => {
    const parts = v.length === 16 ? [0, 4, 8, 12].map((i) => parseInteger(v.substring(i, i + 4))) : [];
    if (parts.length !== 4 || parts.some((x) => x === undefined)) {
      setAttribute(s.m.attributes, key, v, s.warnings);
      return;
    }
    const [antenna, input1, input2, battery] = parts as number[];
    Object.assign(s.m.attributes, {
      antennaVoltage: antenna,
      analogInput1: input1,
      analogInput2: input2,
      battery: battery * 0.001,
    });
  },
  odometer: number((n, s) => {
    s.m.attributes.odometer = n * 1000;
  }), // km
};

function satellites(value: string, s: QueryState, key: string): void {
  const n = parseInteger(value);
  if (n === undefined) s.warnings.push(`${key} is not an integer`);
  else s.m.attributes.sat = n;
}

/** any other parameter: a number, a boolean or the text */
function freeForm(value: string, s: QueryState, key: string): void {
  const n = parseNumber(value);
  const typed: AttributeValue = n !== undefined ? n : value === 'true' ? true : value === 'false' ? false : value;
  setAttribute(s.m.attributes, key, typed, s.warnings);
}

/**
 * decodes OsmAnd query parameters (repeated keys allowed, empty values ignored). Without a usable
 * `timestamp` or `d` the fix time is `receivedAt` (Traccar sets the server's time too), so the
 * simplest integrations (`?id=…&lat=…&lon=…`) are stored as received.
 */
export function decodeQuery(params: URLSearchParams, receivedAt: Date): Outcome {
  const s: QueryState = {
    m: { alarms: [], attributes: {} },
    fields: {},
    valid: true,
    net: new NetworkInfo(),
    warnings: [],
  };
  for (const [key, value] of params) {
    if (value === '') continue;
    const handler = Object.hasOwn(PARAMS, key) ? PARAMS[key] : freeForm;
    handler(value, s, key);
  }
  if (s.id === undefined)
    return { messages: [], status: STATUS_BAD_REQUEST, warnings: [...s.warnings, 'id is missing'] };
  if (s.error) return { identity: s.id, messages: [], status: STATUS_BAD_REQUEST, warnings: [...s.warnings, s.error] };
  if (s.lat !== undefined && s.lon !== undefined) {
    if (Math.abs(s.lat) > 90 || Math.abs(s.lon) > 180) {
      return {
        identity: s.id,
        messages: [],
        status: STATUS_BAD_REQUEST,
        warnings: [...s.warnings, 'coordinates out of range'],
      };
    }
    s.m.location = { latitudeDeg: s.lat, longitudeDeg: s.lon, valid: s.valid, ...s.fields };
    if (typeof s.m.attributes.sat === 'number') s.m.location.satellites = s.m.attributes.sat;
  }
  s.m.fixTime ??= receivedAt;
  s.net.applyTo(s.m.attributes);
  return { identity: s.id, messages: [s.m], status: STATUS_OK, warnings: s.warnings };
}

// ---- JSON (Transistorsoft background geolocation) ----

type Json = Record<string, unknown>;
const isObject = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);
const num = (x: unknown): number | undefined => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);

/** one `location` object: timestamp, coords (speed m/s), event, motion, odometer, battery, alarm, extras */
function decodeJsonLocation(location: Json, warnings: string[]): DecodedMessage | string {
  const m: DecodedMessage = { alarms: [], attributes: {} };
  const a = m.attributes;
  if (typeof location.timestamp === 'string') {
    const time = parseTimestamp(location.timestamp);
    if (time && Number.isFinite(time.getTime())) m.fixTime = time;
    else warnings.push(`timestamp ${location.timestamp} is not a time`);
  }
  if (isObject(location.coords)) {
    const c = location.coords;
    const lat = num(c.latitude);
    const lon = num(c.longitude);
    if (lat === undefined || lon === undefined) return 'coords.latitude/longitude are not numbers';
    if (Math.abs(lat) > 90 || Math.abs(lon) > 180) return 'coordinates out of range';
    const l: DecodedLocation = { latitudeDeg: lat, longitudeDeg: lon, valid: true };
    const speed = num(c.speed);
    if (speed !== undefined && speed >= 0) l.speedKmh = mpsToKmh(speed);
    const heading = num(c.heading);
    if (heading !== undefined && heading >= 0 && heading <= 360) l.courseDeg = heading;
    const accuracy = num(c.accuracy);
    if (accuracy !== undefined && accuracy >= 0) l.accuracyM = accuracy;
    const altitude = num(c.altitude);
    if (altitude !== undefined) l.altitudeM = altitude;
    m.location = l;
  }
  if (typeof location.event === 'string') a.event = location.event;
  if (typeof location.is_moving === 'boolean') a.motion = location.is_moving;
  if (num(location.odometer) !== undefined) a.odometer = Math.trunc(location.odometer as number);
  if (typeof location.mock === 'boolean') a.mock = location.mock;
  if (isObject(location.activity) && typeof location.activity.type === 'string') a.activity = location.activity.type;
  if (isObject(location.battery)) {
    const level = num(location.battery.level);
    if (level !== undefined && level >= 0) a.batteryLevel = Math.trunc(level * 100);
    if (location.battery.is_charging === true) a.charge = true;
  }
  const alarm = location.alarm;
  if (typeof alarm === 'string') {
    if (isAlarm(alarm)) m.alarms.push(alarm);
    else a.alarm = alarm;
  }
  if (isObject(location.extras)) {
    for (const [key, value] of Object.entries(location.extras)) {
      if (key === 'alarm' && typeof alarm === 'string') continue;
      if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string')
        setAttribute(a, key, value, warnings);
    }
  }
  return m;
}

/** decodes a Transistorsoft JSON body: `{device_id, location: {...} | [...]}` */
export function decodeJson(text: string): Outcome {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return { messages: [], status: STATUS_BAD_REQUEST, warnings: ['body is not JSON'] };
  }
  if (!isObject(root)) return { messages: [], status: STATUS_BAD_REQUEST, warnings: ['body is not a JSON object'] };
  const id = root.device_id;
  if ((typeof id !== 'string' && typeof id !== 'number') || id === '') {
    return { messages: [], status: STATUS_BAD_REQUEST, warnings: ['device_id is missing'] };
  }
  const identity = String(id);
  const locations = Array.isArray(root.location) ? root.location : [root.location];
  const warnings: string[] = [];
  const messages: DecodedMessage[] = [];
  for (const location of locations) {
    if (!isObject(location))
      return { identity, messages: [], status: STATUS_BAD_REQUEST, warnings: [...warnings, 'location is missing'] };
    const decoded = decodeJsonLocation(location, warnings);
    if (typeof decoded === 'string')
      return { identity, messages: [], status: STATUS_BAD_REQUEST, warnings: [...warnings, decoded] };
    messages.push(decoded);
  }
  return { identity, messages, status: STATUS_OK, warnings };
}
