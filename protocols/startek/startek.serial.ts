import type { AttributeValue, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import { PROTOCOL } from './startek.constants.js';
import { decimal, int } from './startek.fields.js';

type Attributes = Record<string, AttributeValue>;
/** a field of a `Tn` line: its position, the attribute it becomes, and how it is read */
type Column = [index: number, key: string, read: (value: string) => AttributeValue];

const num = (what: string) => (v: string) => decimal(v, what);
const whole = (what: string) => (v: string) => int(v, what);

/**
 * T1 (manual "Extended data", live engine values): 1 speed, 2 rpm, 3 fuel rate, 4 fuel level,
 * 5-8 axle weights, 9 turbo pressure, 10 coolant °C, 11 pedal, 12 torque %, 13 firmware,
 * 14 battery V, 15 coolant level, 16 oil °C, 17 oil level, 18 throttle, 19-22 (air, second tank,
 * gear, seat belt), 23 oil pressure, 24-25 (wet tank, PTO), 26 ignition (2: not available),
 * 27 brake pedal, 28 catalyst level. Only the columns Traccar keeps are read.
 */
const T1: readonly Column[] = [
  [2, 'rpm', num('rpm')],
  [4, 'fuel', num('fuel level')],
  [10, 'coolantTemp', whole('coolant temperature')],
  [12, 'torque', whole('torque')],
  [14, 'power', num('power')],
  [16, 'oilTemp', num('oil temperature')],
  [18, 'throttle', num('throttle')],
  [23, 'oilPressure', whole('oil pressure')],
];
const T1_IGNITION = 26;
const T1_CATALYST = 28;

/** T2 (totals): 1 distance km, 17 engine hours, 19 fuel rate, 21 fuel used */
const T2: readonly Column[] = [
  [1, 'odometer', (v) => decimal(v, 'odometer') * 1000],
  [17, 'hours', whole('hours')],
  [19, 'fuelConsumption', num('fuel rate')],
  [21, 'fuelUsed', num('fuel used')],
];

function read(values: readonly string[], columns: readonly Column[], a: Attributes): void {
  for (const [index, key, parse] of columns) {
    if (index >= values.length) throw new ProtocolError(PROTOCOL, `${values[0]} line without column ${index}`);
    a[key] = parse(values[index]);
  }
}

/**
 * A 710 block: `Tn,...` lines separated by CR LF. T1 and T2 become attributes of one message
 * without a fix; the other lines (T5-T7, Tx: diagnostics, counters) are not read, as in Traccar.
 */
export function decodeSerial(content: string): DecodedMessage {
  const a: Attributes = {};
  for (const line of content.split('\r\n')) {
    const values = line.split(',');
    if (values[0] === 'T1') {
      read(values, T1, a);
      if (values.length <= T1_CATALYST) throw new ProtocolError(PROTOCOL, 'T1 line without its catalyst level');
      const ignition = int(values[T1_IGNITION], 'ignition');
      if (ignition < 2) a.ignition = ignition > 0;
      a.catalystLevel = decimal(values[T1_CATALYST], 'catalyst level');
    } else if (values[0] === 'T2') {
      read(values, T2, a);
    }
  }
  return { alarms: [], attributes: a };
}
