import type { AttributeValue, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import { NetworkInfo } from '../shared/network.js';
import { EVENT_ALARMS, EVENT_DRIVER_ID, PROTOCOL } from './startek.constants.js';
import { decimal, hex, int } from './startek.fields.js';

const H = '[0-9A-Fa-f]+';

/**
 * The 000 report after `&&<i><len>,<imei>,000,` and before the checksum (manual "Position and
 * event report"): event, event data, yymmddhhmmss, A/V, latitude, longitude, satellites, hdop,
 * km/h, course, altitude, odometer, `mcc|mnc|lac|cid`, csq, status, inputs, outputs,
 * `power|battery|adc...`, then optionally: extended flag, fuel sensors, temperature sensors, OBD
 * `rpm|load|maf|map|iat|tps|ect|fuel rate|level%`, a driver id (20 characters or more), engine hours.
 * The optional tail nests as the device fills it in from the left.
 */
const REPORT = new RegExp(
  [
    '^(\\d+),([^,]+)?,(\\d\\d)(\\d\\d)(\\d\\d)(\\d\\d)(\\d\\d)(\\d\\d),([AV]),',
    '(-?\\d+\\.\\d+),(-?\\d+\\.\\d+),(\\d+),(\\d+\\.\\d+),(\\d+),(\\d+),(-?\\d+),(\\d+),',
    `(\\d+)\\|(\\d+)\\|(${H})\\|(${H}),(\\d+),(${H}),(${H}),(${H}),(${H})\\|(${H})([^,]+)?`,
    '(?:,\\d+,([^,]+)?(?:,([^,]+)?(?:,',
    '(?:(\\d+)?\\|(\\d+)?\\|(\\d+)?\\|(\\d+)?\\|(\\d+)?\\|(\\d+)?\\|(\\d+)?\\|(\\d+)?\\|(?:(\\d+)[%L])?)?',
    '(?:,([^,]{20,}))?(?:,(\\d+))?)?)?)?',
  ].join(''),
  's',
);

/** The groups of REPORT, in order, by name. */
const FIELDS = [
  'event',
  'eventData',
  'yy',
  'MM',
  'dd',
  'hh',
  'mm',
  'ss',
  'valid',
  'lat',
  'lon',
  'sat',
  'hdop',
  'speed',
  'course',
  'altitude',
  'odometer',
  'mcc',
  'mnc',
  'lac',
  'cid',
  'csq',
  'status',
  'inputs',
  'outputs',
  'power',
  'battery',
  'adc',
  'fuels',
  'temps',
  'rpm',
  'load',
  'maf',
  'map',
  'iat',
  'tps',
  'ect',
  'fuelRate',
  'fuelLevel',
  'driver',
  'hours',
] as const;
type Field = (typeof FIELDS)[number];
type Groups = Partial<Record<Field, string>>;

function groupsOf(content: string): Groups {
  const m = REPORT.exec(content);
  if (!m)
    throw new ProtocolError(PROTOCOL, 'a 000 report that matches no known layout', Buffer.from(content, 'latin1'));
  const g: Groups = {};
  FIELDS.forEach((name, i) => {
    const v = m[i + 1];
    if (v !== undefined && v !== '') g[name] = v;
  });
  return g;
}

function fixTimeOf(g: Groups): Date {
  const [y, mo, d, h, mi, s] = [g.yy, g.MM, g.dd, g.hh, g.mm, g.ss].map(Number);
  const t = new Date(Date.UTC(2000 + y, mo - 1, d, h, mi, s));
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59 || t.getUTCDate() !== d)
    throw new ProtocolError(PROTOCOL, `no such time ${g.yy}${g.MM}${g.dd}${g.hh}${g.mm}${g.ss}`);
  return t;
}

/** `NNvvvv|...`: a two-digit sensor number, then its hex value */
function sensors(list: string, each: (index: number, value: number) => void): void {
  for (const item of list.split('|')) {
    if (!/^\d\d[0-9A-Fa-f]{1,8}$/.test(item)) throw new ProtocolError(PROTOCOL, `sensor field "${item.slice(0, 20)}"`);
    each(Number(item.slice(0, 2)), parseInt(item.slice(2), 16));
  }
}

/** fuel sensors in 0.1 units, temperatures in 0.1 °C with bit 15 the sign, extra ADC inputs in 0.01 V */
function setSensors(a: Record<string, AttributeValue>, g: Groups): void {
  const adc = (g.adc ?? '').split('|');
  for (let i = 1; i < adc.length; i++) a[`adc${i + 1}`] = hex(adc[i], 'adc') / 100;
  if (g.fuels) sensors(g.fuels, (n, v) => (a[`fuel${n}`] = v / 10));
  if (g.temps) sensors(g.temps, (n, v) => (a[`temp${n}`] = ((v & 0x8000 ? -1 : 1) * (v & 0x7fff)) / 10));
}

/** the OBD block, when any of its fields is there; intake and coolant temperatures are offset by 40 °C */
function setObd(a: Record<string, AttributeValue>, g: Groups): void {
  const obd: Field[] = ['rpm', 'load', 'maf', 'map', 'iat', 'tps', 'ect', 'fuelRate', 'fuelLevel'];
  if (!obd.some((f) => g[f] !== undefined)) return;
  const set = (key: string, f: Field, map: (n: number) => number = (n) => n): void => {
    if (g[f] !== undefined) a[key] = map(int(g[f], f));
  };
  set('rpm', 'rpm');
  set('engineLoad', 'load');
  set('airFlow', 'maf');
  set('airPressure', 'map');
  set('airTemp', 'iat', (n) => n - 40);
  set('throttle', 'tps');
  set('coolantTemp', 'ect', (n) => n - 40);
  set('fuelConsumption', 'fuelRate', (n) => n / 10);
  set('fuel', 'fuelLevel');
}

function attributesOf(g: Groups): Record<string, AttributeValue> {
  const event = int(g.event!, 'event');
  const a: Record<string, AttributeValue> = { event };
  if (event === EVENT_DRIVER_ID && g.eventData !== undefined) a.driverUniqueId = g.eventData;
  a.sat = int(g.sat!, 'satellites');
  a.hdop = decimal(g.hdop!, 'hdop');
  a.odometer = int(g.odometer!, 'odometer');
  const network = new NetworkInfo();
  network.addCell(int(g.mcc!, 'mcc'), int(g.mnc!, 'mnc'), hex(g.lac!, 'lac'), hex(g.cid!, 'cid'), int(g.csq!, 'csq'));
  network.applyTo(a);
  a.status = hex(g.status!, 'status');
  const inputs = hex(g.inputs!, 'inputs');
  a.ignition = (inputs & 0b10) !== 0;
  a.door = (inputs & 0b100) !== 0;
  a.input = inputs;
  a.output = hex(g.outputs!, 'outputs');
  a.power = hex(g.power!, 'power') / 100;
  a.battery = hex(g.battery!, 'battery') / 100;
  setSensors(a, g);
  setObd(a, g);
  if (g.driver !== undefined) a.driverUniqueId = g.driver;
  if (g.hours !== undefined) a.hours = int(g.hours, 'hours') * 1000;
  return a;
}

/** A 000 report as one position; its event code may be an alarm (event 53 names the driver instead). */
export function decodeReport(content: string): DecodedMessage {
  const g = groupsOf(content);
  const latitudeDeg = decimal(g.lat!, 'latitude');
  const longitudeDeg = decimal(g.lon!, 'longitude');
  if (Math.abs(latitudeDeg) > 90 || Math.abs(longitudeDeg) > 180)
    throw new ProtocolError(PROTOCOL, `coordinates ${latitudeDeg},${longitudeDeg} out of range`);
  const course = int(g.course!, 'course');
  const event = int(g.event!, 'event');
  const alarm = event === EVENT_DRIVER_ID ? undefined : EVENT_ALARMS[event];
  return {
    fixTime: fixTimeOf(g),
    location: {
      latitudeDeg,
      longitudeDeg,
      valid: g.valid === 'A',
      speedKmh: int(g.speed!, 'speed'),
      ...(course <= 360 && { courseDeg: course }),
      altitudeM: int(g.altitude!, 'altitude'),
      satellites: int(g.sat!, 'satellites'),
    },
    alarms: alarm ? [alarm] : [],
    attributes: attributesOf(g),
  };
}
