import { Fields, Report, bit, hex, int, modelOf, num, setLocation, time14 } from './gl200.fields.js';
import type { TextHandler } from './gl200.messages.js';

/**
 * CAN: vehicle bus data. A report mask says which fields follow, an extension mask (bit 29) and a
 * CAN mask (extension bit 31) more; the GV35xCEU models insert fields of their own
 * (Gl200TextProtocolDecoder.decodeCan). Fields this decoder does not keep are stepped over.
 */

const popcount = (value: number): number => {
  let n = 0;
  for (let v = value; v > 0; v = Math.floor(v / 2)) n += v % 2;
  return n;
};

/** a field that is there and not empty */
const filled = (f: Fields): string | undefined => {
  const v = f.next();
  return v === '' ? undefined : v;
};

/** hex of the field at the cursor, 0 when empty (a count or mask a model may leave out) */
const maskAt = (f: Fields): number => (f.at(0) ? hex(f.at(0), 'mask') : 0);

const stripPrefix = (value: string, prefixes: readonly string[]): string =>
  prefixes.some((p) => value.startsWith(p)) ? value.substring(1) : value;

/** the field at the cursor when `mask` has bit `b`: applied when it is not empty */
function maskedField(f: Fields, mask: number, b: number, apply: (value: string) => void): void {
  if (!bit(mask, b)) return;
  const v = filled(f);
  if (v !== undefined) apply(v);
}

/** the report mask's fields, bits 1 to 27 */
function reportFields(r: Report, f: Fields, mask: number, model: string, ceu: boolean): void {
  const field = (b: number, apply: (value: string) => void): void => maskedField(f, mask, b, apply);
  field(1, (v) => r.set('ignition', int(v, 'ignition') > 0));
  field(2, (v) => v.startsWith('H') && r.set('obdOdometer', int(v.substring(1), 'odometer') * 100));
  field(3, (v) => !v.startsWith('K') && r.set('fuelUsed', num(stripPrefix(v, ['L']), 'fuel used')));
  field(5, (v) => r.set('rpm', int(v, 'rpm')));
  field(4, (v) => r.set('obdSpeed', int(v, 'speed')));
  field(6, (v) => r.set('coolantTemp', int(v, 'coolant temperature')));
  field(7, (v) => v.startsWith('L/H') && r.set('fuelConsumption', num(v.substring(3), 'fuel consumption')));
  field(8, (v) => r.set('fuel', num(v.substring(1), 'fuel level')));
  field(9, (v) => r.set('range', int(v, 'range') * 100));
  field(10, (v) => r.set('throttle', int(v, 'throttle')));
  field(11, (v) => r.set('hours', num(v, 'engine hours') * 3_600_000));
  field(12, (v) => r.set('drivingTime', num(v, 'driving time')));
  field(13, (v) => r.set('idleHours', num(v, 'idle hours')));
  field(14, (v) => !v.startsWith('K') && r.set('idleFuelConsumption', num(stripPrefix(v, ['L']), 'idle fuel')));
  field(15, (v) => r.set('axleWeight', int(v, 'axle weight')));
  field(16, (v) => r.set('tachographInfo', hex(v, 'tachograph')));
  field(17, (v) => r.set('indicators', hex(v, 'indicators')));
  field(18, (v) => r.set('lights', hex(v, 'lights')));
  field(19, (v) => r.set('doors', hex(v, 'doors')));
  field(20, (v) => r.set('vehicleOverspeed', num(v, 'overspeed time')));
  field(21, (v) => r.set('engineOverspeed', num(v, 'overspeed time')));
  if (model === 'GV350M') {
    for (const b of [22, 23, 24]) if (bit(mask, b)) f.skip(); // impulse distance, gross weight, catalyst level
  } else if (ceu) {
    for (const b of [23, 24, 25, 26, 27]) if (bit(mask, b)) f.skip(); // engine starts, cold running time, handbrake
  }
}

/** the extension mask's fields; returns the CAN mask (bit 31), 0 when absent */
function extensionFields(r: Report, f: Fields, ext: number, ceu: boolean): number {
  const extField = (b: number, apply: (value: string) => void): void => maskedField(f, ext, b, apply);
  const extSkip = (...bits: number[]): void => bits.forEach((b) => bit(ext, b) && f.skip());
  extField(0, (v) => r.set('adBlueLevel', num(stripPrefix(v, ['L', 'P']), 'AdBlue level')));
  extField(1, (v) => r.set('axleWeight1', int(v, 'axle weight')));
  extField(2, (v) => r.set('axleWeight3', int(v, 'axle weight')));
  extField(3, (v) => r.set('axleWeight4', int(v, 'axle weight')));
  extSkip(4, 5, 6); // tachograph overspeed, motion, direction
  extField(7, (v) => r.set('adc1', int(v, 'analog input') / 1000));
  extSkip(8, 9, 10, 11, 12, 13, 14); // braking factors, kick-downs, engine speed, cruise control, brake applications
  extField(15, (v) => r.set('driver1Card', v));
  extField(16, (v) => r.set('driver2Card', v));
  extField(17, (v) => r.set('driver1Name', v));
  extField(18, (v) => r.set('driver2Name', v));
  extField(19, (v) => r.set('registration', v));
  extSkip(20, 21, 22, 23, 24, 25); // expansion, rapid brakings and accelerations, torque, service distance, ambient temperature
  if (!ceu) extSkip(26, 27); // tachograph driver working time masks
  if (bit(ext, 28)) {
    const count = ceu && f.at(0) ? int(f.at(0), 'dtc count') : 0;
    f.skip(1 + count); // dtc codes
  }
  extSkip(29, 30); // gaseous fuel level, tachograph information expand

  let can = 0;
  extField(31, (v) => {
    can = hex(v, 'CAN mask');
  });
  return can;
}

/** the CAN mask's fields (none kept), and the blocks the GV35xCEU models add */
function skipCanFields(
  f: Fields,
  model: string,
  masks: { report: number; ext: number; can: number },
  ceu: boolean,
): void {
  const { report: mask, ext, can } = masks;
  if (bit(can, 0)) f.skip(); // retarder usage
  if (bit(can, 1)) f.skip(); // power mode
  if (model !== 'GV350CEU' && bit(can, 2)) f.skip(); // tachograph timestamp
  if (ceu) {
    for (let b = 4; b <= 12; b++) if (bit(can, b)) f.skip();
    if (bit(can, 14)) f.skip(); // gross vehicle weight
    if (bit(can, 15)) {
      const count = f.at(0) ? int(f.at(0), 'tyre count') : 0;
      f.skip(1 + count * 5); // axle, wheel, pressure, temperature, status
    }
    for (let b = 16; b <= 19; b++) if (bit(can, b)) f.skip();
    if (bit(can, 3)) f.skip(1 + popcount(maskAt(f))); // e-genset data
    if (bit(mask, 28)) f.skip(1 + popcount(maskAt(f))); // electric vehicle data
  }
  if (model === 'GV355CEU') {
    for (const b of [26, 27]) if (bit(ext, b)) f.skip(1 + popcount(maskAt(f))); // tachograph working time
  }
}

/** report mask bit 30: the GPS block */
function canLocation(r: Report, f: Fields): void {
  while (f.i < f.length && f.at(0) === '') f.skip();
  const valid = int(f.next(), 'gps accuracy') > 0;
  if (f.at(0)) {
    const [speed, course, altitude, lon, lat, time] = [f.next(), f.next(), f.next(), f.next(), f.next(), f.next()];
    setLocation(r, lon, lat, speed, course, altitude);
    r.gpsTime = time14(time, 'gps time');
    r.location!.valid = valid;
  }
}

export const decodeCan: TextHandler = (t) => {
  const f = new Fields(t.values);
  f.skip(); // header
  const model = modelOf(f.next(), t.declaredModel);
  f.skip(); // imei
  const r = new Report();
  f.skip(3); // device name, report type, can bus state
  const mask = hex(f.next(), 'CAN report mask');
  const ceu = /^GV35.CEU$/.test(model);

  if (bit(mask, 0)) r.set('vin', f.next());
  reportFields(r, f, mask, model, ceu);
  let ext = 0;
  maskedField(f, mask, 29, (v) => {
    ext = hex(v, 'CAN extension mask');
  });
  const can = extensionFields(r, f, ext, ceu);
  skipCanFields(f, model, { report: mask, ext, can }, ceu);
  if (model !== 'GV355CEU' && bit(mask, 30)) canLocation(r, f);
  const sent = f.fromEnd(2);
  if (sent) r.deviceTime = time14(sent, 'send time');
  return [r];
};
