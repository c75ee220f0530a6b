import test from 'ava';
import {
  DETECTORS,
  INITIAL_STATE,
  type RuleInput,
  type RulePosition,
  type RuleState,
  type ZoneTest,
} from '../../../core/rules/rule-detectors.js';
import {
  RULE_ALERT_NAMES,
  type AlertRule,
  type RuleAlertName,
  type RuleParams,
} from '../../../core/model/alert-rule.js';

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const MIN = 60_000;

const rule = (alertName: RuleAlertName, params: RuleParams = {}, minDurationSeconds = 0): AlertRule => ({
  id: 'r1',
  accountId: 'a1',
  name: `rule ${alertName}`,
  alertName,
  devices: ['d1'],
  group: null,
  enabled: true,
  params,
  minDurationSeconds,
  schedule: null,
  notify: { email: false, sms: false },
  command: null,
  created: 0,
});
const pos = (t: number, over: Partial<RulePosition> = {}): RuleInput => ({
  kind: 'position',
  position: { fixTime: T0 + t, latitude: 40, longitude: -3, speed: 0, valid: true, attributes: {}, ...over },
});
const tick = (t: number, lastReportAt: number | null = null, expiresAt: number | null = null): RuleInput => ({
  kind: 'tick',
  tick: { now: T0 + t, lastReportAt, expiresAt },
});
/** a square zone 40..41 N, -4..-3 W */
const zone: ZoneTest = { name: 'Depot', contains: (lat, lon) => lat >= 40 && lat <= 41 && lon >= -4 && lon <= -3 };

/** Runs the inputs through the rule's detector: the alerts' texts and times (ms after T0), and the last state. */
function run(
  r: AlertRule,
  inputs: RuleInput[],
  state: RuleState = INITIAL_STATE,
): { alerts: { text: string; at: number }[]; state: RuleState } {
  const alerts: { text: string; at: number }[] = [];
  let s = state;
  for (const input of inputs) {
    const out = DETECTORS[r.alertName](r, s, input, { zone });
    s = out.state;
    if (out.alert) alerts.push({ text: out.alert.text, at: out.alert.at - T0 });
  }
  return { alerts, state: s };
}

test('rule-detectors: one detector for every alert name a rule can raise', (t) => {
  t.deepEqual(Object.keys(DETECTORS).sort(), [...RULE_ALERT_NAMES].sort());
});

test('rule-detectors: SpeedLimit with a 2-minute minimum fires once when the speeding has lasted 2 minutes, and again only after it ended', (t) => {
  const r = rule('SpeedLimit', { speed: 90 }, 120);
  const speeding = [0, 30, 60, 90, 119].map((s) => pos(s * 1000, { speed: 104 }));
  t.deepEqual(run(r, speeding).alerts, [], 'not before 2 minutes');
  const { alerts, state } = run(r, [
    ...speeding,
    pos(120_000, { speed: 100 }),
    pos(150_000, { speed: 110 }),
    pos(180_000, { speed: 95 }),
  ]);
  t.deepEqual(alerts, [{ text: 'Speed 100 km/h over the limit of 90 km/h', at: 120_000 }]);
  t.true(state.fired);
  const again = run(
    r,
    [pos(200_000, { speed: 50 }), pos(210_000, { speed: 120 }), pos(330_000, { speed: 120 })],
    state,
  );
  t.deepEqual(
    again.alerts.map((a) => a.at),
    [330_000],
    'a new episode after it ended',
  );
});

test('rule-detectors: a tick fires an episode whose minimum duration passed with no position, with the text of its start', (t) => {
  const r = rule('SpeedLimit', { speed: 90 }, 60);
  const { alerts } = run(r, [pos(0, { speed: 120 }), tick(30_000), tick(61_000), tick(90_000)]);
  t.deepEqual(alerts, [{ text: 'Speed 120 km/h over the limit of 90 km/h', at: 61_000 }]);
});

test('rule-detectors: ForbiddenArea fires on entering, once per visit; AllowedArea on leaving', (t) => {
  const inside = { latitude: 40.5, longitude: -3.5 };
  const outside = { latitude: 42, longitude: -3.5 };
  const f = run(rule('ForbiddenArea', { zone: 'z' }), [
    pos(0, outside),
    pos(1000, inside),
    pos(2000, inside),
    pos(3000, outside),
    pos(4000, inside),
  ]);
  t.deepEqual(f.alerts, [
    { text: 'Inside the forbidden zone "Depot"', at: 1000 },
    { text: 'Inside the forbidden zone "Depot"', at: 4000 },
  ]);
  const a = run(rule('AllowedArea', { zone: 'z' }), [pos(0, inside), pos(1000, outside), pos(2000, outside)]);
  t.deepEqual(a.alerts, [{ text: 'Outside the allowed zone "Depot"', at: 1000 }]);
  t.deepEqual(
    run(rule('ForbiddenArea', { zone: 'z' }), [pos(0, { ...inside, valid: false })]).alerts,
    [],
    'an invalid fix says nothing',
  );
});

test('rule-detectors: CheckArea fires on entering and on leaving; CheckPoint on reaching', (t) => {
  const inside = { latitude: 40.5, longitude: -3.5 };
  const outside = { latitude: 42, longitude: -3.5 };
  const c = run(rule('CheckArea', { zone: 'z' }), [
    pos(0, outside),
    pos(1000, inside),
    pos(2000, inside),
    pos(3000, outside),
    pos(4000, outside),
  ]);
  t.deepEqual(c.alerts, [
    { text: 'Entered the zone "Depot"', at: 1000 },
    { text: 'Left the zone "Depot"', at: 3000 },
  ]);
  const held = run(rule('CheckArea', { zone: 'z' }, 60), [
    pos(0, outside),
    pos(1000, inside),
    pos(30_000, outside),
    pos(40_000, inside),
    pos(101_000, inside),
  ]);
  t.deepEqual(
    held.alerts.map((a) => [a.text, a.at]),
    [['Entered the zone "Depot"', 101_000]],
    'a visit shorter than the minimum duration raises nothing',
  );
  const p = run(rule('CheckPoint', { zone: 'z' }), [pos(0, outside), pos(1000, inside), pos(2000, inside)]);
  t.deepEqual(
    p.alerts.map((a) => a.text),
    ['Reached the check point "Depot"'],
  );
});

test('rule-detectors: Offline fires once when the device has been silent for the minutes, from ticks alone; a report ends it', (t) => {
  const r = rule('Offline', { minutes: 10 });
  const last = T0;
  const { alerts, state } = run(r, [
    tick(5 * MIN, last),
    tick(9 * MIN, last),
    tick(10 * MIN, last),
    tick(11 * MIN, last),
    tick(30 * MIN, last),
  ]);
  t.deepEqual(alerts, [{ text: 'No report for 10 minutes (last at 2026-03-01T10:00:00Z)', at: 10 * MIN }]);
  const back = run(r, [pos(31 * MIN), tick(35 * MIN, T0 + 31 * MIN), tick(41 * MIN, T0 + 31 * MIN)], state);
  t.deepEqual(
    back.alerts.map((a) => a.at),
    [41 * MIN],
    'a new episode after it reported again',
  );
  t.deepEqual(run(r, [tick(60 * MIN, null)]).alerts, [], 'a device that never reported is not offline');
});

test('rule-detectors: NoMovementTime and IdleTime count stopped minutes, IdleTime only with ignition on', (t) => {
  const nm = run(rule('NoMovementTime', { minutes: 5 }), [
    pos(0, { speed: 40 }),
    pos(MIN, { speed: 0 }),
    pos(3 * MIN, { speed: 1 }),
    tick(6 * MIN),
    tick(7 * MIN),
  ]);
  t.deepEqual(nm.alerts, [{ text: 'Not moving for 5 minutes', at: 6 * MIN }]);
  const idle = run(rule('IdleTime', { minutes: 5 }), [
    pos(0, { speed: 0, ignition: false }),
    pos(MIN, { speed: 0, ignition: true }),
    tick(5 * MIN),
    tick(6 * MIN),
  ]);
  t.deepEqual(idle.alerts, [{ text: 'Idling (ignition on, not moving) for 5 minutes', at: 6 * MIN }]);
  t.deepEqual(
    run(rule('IdleTime', { minutes: 5 }), [pos(0, { speed: 0, ignition: false }), tick(10 * MIN)]).alerts,
    [],
  );
});

test('rule-detectors: thresholds: LowBattery (default 20 %), BatteryVoltage, temperature, fuel, mileage', (t) => {
  t.deepEqual(
    run(rule('LowBattery'), [pos(0, { battery: 50 }), pos(1000, { battery: 19 }), pos(2000, { battery: 10 })]).alerts,
    [{ text: 'Battery 19 % below 20 %', at: 1000 }],
  );
  t.is(
    run(rule('BatteryVoltage', { value: 11.5 }), [pos(0, { attributes: { power: 11.2 } })]).alerts[0].text,
    'Battery 11.2 V below 11.5 V',
  );
  t.is(run(rule('TemperatureGreaterThan', { value: 8 }), [pos(0, { temperature: 9.5 })]).alerts.length, 1);
  t.is(run(rule('TemperatureLowerThan', { value: -18 }), [pos(0, { temperature: -10 })]).alerts.length, 0);
  t.is(run(rule('FuelLessThan', { value: 10 }), [pos(0, { fuel: 9 })]).alerts.length, 1);
  t.deepEqual(
    run(rule('Mileage', { value: 10000 }), [
      pos(0, { mileage: 9999 }),
      pos(1000, { mileage: 10001 }),
      pos(2000, { mileage: 10050 }),
    ]).alerts.map((a) => a.at),
    [1000],
  );
});

test('rule-detectors: sensors, attributes, fuel jumps, GPS signal and expiry', (t) => {
  t.deepEqual(
    run(rule('Sensor2On'), [
      pos(0, { attributes: { in2: false } }),
      pos(1000, { attributes: { in2: true } }),
      pos(2000, { attributes: { in2: 1 } }),
    ]).alerts.map((a) => a.at),
    [1000],
  );
  t.deepEqual(
    run(rule('Sensor1Off'), [
      pos(0, { attributes: { in1: true } }),
      pos(1000, { attributes: { in1: false } }),
    ]).alerts.map((a) => a.at),
    [1000],
  );
  t.is(
    run(rule('AttributeEquals', { attribute: 'door', value: 'open' }), [pos(0, { attributes: { door: 'open' } })])
      .alerts[0].text,
    'Attribute door = open (is open)',
  );
  t.is(
    run(rule('AttributeGreaterThan', { attribute: 'rpm', value: 3000 }), [
      pos(0, { attributes: { rpm: 2000 } }),
      pos(1, { attributes: { rpm: 3500 } }),
    ]).alerts.length,
    1,
  );
  t.is(
    run(rule('AttributeLessThan', { attribute: 'rpm', value: 3000 }), [pos(0, { attributes: { rpm: 'n/a' } })]).alerts
      .length,
    0,
  );
  const jumps = run(rule('FuelJumpDown', { value: 20 }), [
    pos(0, { fuel: 80 }),
    pos(1000, { fuel: 75 }),
    pos(2000, { fuel: 50 }),
    pos(3000, { fuel: 20 }),
  ]);
  t.deepEqual(
    jumps.alerts,
    [
      { text: 'Fuel dropped from 75 to 50', at: 2000 },
      { text: 'Fuel dropped from 50 to 20', at: 3000 },
    ],
    'each jump is its own alert',
  );
  t.is(run(rule('FuelJumpUp', { value: 20 }), [pos(0, { fuel: 10 }), pos(1000, { fuel: 60 })]).alerts.length, 1);
  t.deepEqual(
    run(rule('GPSNoSignal', { minutes: 2 }), [
      pos(0, { valid: false }),
      tick(MIN),
      pos(2 * MIN, { valid: false }),
    ]).alerts.map((a) => a.at),
    [2 * MIN],
  );
  const expires = T0 + 3 * 86_400_000;
  t.deepEqual(
    run(rule('ExpiredDate', { value: 2 }), [
      tick(0, null, expires),
      tick(86_400_000, null, expires),
      tick(2 * 86_400_000, null, expires),
    ]).alerts.map((a) => a.at),
    [86_400_000],
  );
});

test('rule-detectors: a position that changes nothing leaves the state object as it was (nothing to store)', (t) => {
  const r = rule('SpeedLimit', { speed: 90 });
  const s = run(r, [pos(0, { speed: 50 })]).state;
  t.is(DETECTORS.SpeedLimit(r, s, pos(1000, { speed: 60 }), {}).state, s);
  const on = run(r, [pos(0, { speed: 120 })]).state;
  t.is(DETECTORS.SpeedLimit(r, on, pos(1000, { speed: 130 }), {}).state, on);
});
