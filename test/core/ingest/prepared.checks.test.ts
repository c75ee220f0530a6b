/**
 * The checks on rows a gateway process or an edge sends prepared (core/ingest/prepared.checks.ts):
 * a key is a field of the stored location only when it is one of its own fields, never a name the
 * field table inherits (`__proto__`, `constructor`, `toString` ...).
 */
import test from 'ava';
import { preparedLocation, type PreparedRow } from '../../../core/ingest/prepared.checks.js';
import { runSteps } from '../../../core/ingest/ingest.steps.js';
import { storedJson } from '../../../core/model/location.js';

const RECEIVED = new Date(Date.UTC(2026, 2, 1, 12, 0, 0));
const FIX = new Date(Date.UTC(2026, 2, 1, 11, 59, 0, 250));
const ROW: PreparedRow = {
  fixMs: FIX.getTime(),
  serverTimeMs: RECEIVED.getTime(),
  protocol: 'teltonika',
  nowMs: RECEIVED.getTime(),
};

const stored = (): string => {
  const d = runSteps(
    {
      fixTime: FIX,
      location: { latitudeDeg: 54.6872, longitudeDeg: 25.2797, valid: true, speedKmh: 42 },
      alarms: [],
      attributes: { sat: 11, ignition: true },
    },
    ROW.protocol,
    RECEIVED,
  );
  return storedJson(d.location!);
};

test('prepared checks: the text the ingest steps write passes as it is', (t) => {
  const l = preparedLocation(stored(), ROW);
  t.false(typeof l === 'string', String(l));
});

for (const key of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'])
  test(`prepared checks: a key "${key}" is no field of a location, and the row is refused`, (t) => {
    const json = stored().replace('{', `{"${key}":{"x":1},`);
    t.is(preparedLocation(json, ROW), `${key} is not a field of a location`);
  });
