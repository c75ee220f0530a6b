import type { Alarm } from '../../core/model/alarm.js';
import type { DecodedMessage } from '../types.js';

/** One message as its parameters fill it in. */
export interface Draft {
  fixTime?: Date;
  latitudeDeg: number;
  longitudeDeg: number;
  valid: boolean;
  speedKmh?: number;
  courseDeg?: number;
  altitudeM?: number;
  message: DecodedMessage;
}

/** a parameter's value as the reference reads it; undefined when the JSON type does not fit */
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
/** Java's JsonNumber.intValue(): the integer part, wrapped to 32 bits */
const int = (v: unknown): number | undefined => {
  const n = num(v);
  return n === undefined ? undefined : Math.trunc(n) | 0;
};
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** `timestamp`: UNIX seconds (the fraction dropped, as the reference does), or an ISO 8601 UTC text as the docs allow */
function timestamp(v: unknown): Date | undefined {
  const n = num(v);
  if (n !== undefined) return Math.abs(n) < 1e13 ? new Date(Math.trunc(n) * 1000) : undefined;
  const s = str(v);
  if (s === undefined || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/.test(s)) return undefined;
  const d = new Date(/[zZ]|[+-]\d{2}:?\d{2}$/.test(s) ? s : `${s}Z`);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

type Setter = (d: Draft, v: unknown, index: number) => boolean;

/** a parameter stored as a number attribute */
const numberAttribute =
  (key: string, read: (v: unknown) => number | undefined = num): Setter =>
  (d, v) => {
    const n = read(v);
    if (n === undefined) return false;
    d.message.attributes[key] = n;
    return true;
  };
const textAttribute =
  (key: string): Setter =>
  (d, v) => {
    const s = str(v);
    if (s === undefined) return false;
    d.message.attributes[key] = s;
    return true;
  };
/** an event parameter: `true` raises the alarm; any value is consumed */
const alarm =
  (a: Alarm): Setter =>
  (d, v) => {
    if (v === true && !d.message.alarms.includes(a)) d.message.alarms.push(a);
    return true;
  };
const location =
  (set: (d: Draft, n: number) => void): Setter =>
  (d, v) => {
    const n = num(v);
    if (n === undefined) return false;
    set(d, n);
    return true;
  };

/** Every parameter the reference names, by its name without the `#index` suffix. */
export const PARAMS: Readonly<Record<string, Setter>> = {
  timestamp: (d, v) => {
    const t = timestamp(v);
    if (t) d.fixTime = t;
    return t !== undefined;
  },
  'position.latitude': location((d, n) => {
    d.latitudeDeg = n;
  }),
  'position.longitude': location((d, n) => {
    d.longitudeDeg = n;
  }),
  'position.speed': location((d, n) => {
    d.speedKmh = n;
  }),
  'position.direction': location((d, n) => {
    d.courseDeg = n;
  }),
  'position.altitude': location((d, n) => {
    d.altitudeM = n;
  }),
  'position.satellites': numberAttribute('sat', int),
  'position.valid': (d, v) => {
    d.valid = v === true;
    return true;
  },
  'position.hdop': numberAttribute('hdop'),
  'position.pdop': numberAttribute('pdop'),
  din: numberAttribute('input', int),
  dout: numberAttribute('output', int),
  'report.reason': numberAttribute('event', int),
  'gps.vehicle.mileage': numberAttribute('odometer'),
  'external.powersource.voltage': numberAttribute('power'),
  'battery.voltage': numberAttribute('battery'),
  'battery.level': numberAttribute('batteryLevel', int),
  'fuel.level': numberAttribute('fuel'),
  'can.fuel.level': numberAttribute('fuel'),
  'engine.rpm': numberAttribute('rpm'),
  'can.engine.rpm': numberAttribute('rpm'),
  'can.engine.temperature': (d, v, index) => numberAttribute(`temp${Math.max(index, 0)}`)(d, v, index),
  'engine.ignition.status': (d, v) => {
    d.message.attributes.ignition = v === true;
    return true;
  },
  'movement.status': (d, v) => {
    d.message.attributes.motion = v === true;
    return true;
  },
  'device.temperature': numberAttribute('deviceTemp'),
  'ibutton.code': textAttribute('driverUniqueId'),
  'vehicle.vin': textAttribute('vin'),
  'alarm.event.trigger': alarm('general'),
  'towing.event.trigger': alarm('tow'),
  'towing.alarm.status': alarm('tow'),
  'geofence.event.enter': alarm('geofenceEnter'),
  'geofence.event.exit': alarm('geofenceExit'),
  'shock.event.trigger': alarm('vibration'),
  'overspeeding.event.trigger': alarm('overspeed'),
  'harsh.acceleration.event.trigger': alarm('hardAcceleration'),
  'harsh.braking.event.trigger': alarm('hardBraking'),
  'harsh.cornering.event.trigger': alarm('hardCornering'),
  'gnss.antenna.cut.status': alarm('gpsAntennaCut'),
  'gsm.jamming.event.trigger': alarm('jamming'),
  'hood.open.status': alarm('bonnet'),
  'external.powersource.status': (d, v) => {
    if (v === true) d.message.attributes.charge = true;
    return true;
  },
  'custom.wln_accel_max': numberAttribute('maxAcceleration'),
  'custom.wln_brk_max': numberAttribute('maxBraking'),
  'custom.wln_crn_max': numberAttribute('maxCornering'),
};
