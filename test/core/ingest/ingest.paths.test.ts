import test from 'ava';
import pg from 'pg';
import { startHarness, PASSWORD } from '../../gateway/mqtt/mqtt-harness.js';
import { backends, lockWaiters } from '../../helpers/backends.js';
import { startServer } from '../../helpers/server.js';
import { until } from '../../helpers/wait.js';
import type { PositionReport } from '../../../core/model/report.js';

const withPostgres = (await backends()).includes('postgres');
const T0 = Date.UTC(2026, 2, 1, 10, 0);
const at = (minute: number) => new Date(T0 + minute * 60_000).toISOString();

const trackerReport = (minute: number, latitude: number, valid = true): PositionReport => ({
  fixTime: new Date(T0 + minute * 60_000),
  location: { latitudeDeg: latitude, longitudeDeg: latitude, valid },
  alarms: [],
  attributes: {},
});

test('ingest: a tracker, REST and MQTT go through the same steps: a position at (0, 0) without a valid fix is stored from none of them', async (t) => {
  const h = await startHarness(t);
  await h.device('dev1');
  const device = await h.s.running.services.directory.find('dev1');
  const tracker = await h.s.running.services.ingest.submit(device!, 'test', [trackerReport(1, 0, false)]);
  t.deepEqual(tracker.locations, []);
  const rest = await h.s.request('POST', '/api/devices/dev1/locations', {
    token: h.s.adminToken,
    body: { location: { dateTime: at(2), latitude: 0, longitude: 0, valid: false } },
  });
  t.is(rest.status, 201);
  t.deepEqual(rest.body.locations, [], 'the answer shows what was stored: nothing');
  const c = await h.connect({ username: 'dev1', password: PASSWORD, clientId: 'dev1' });
  t.truthy(
    await c.publishAsync(
      'devices/dev1/locations',
      JSON.stringify({ dateTime: at(3), latitude: 0, longitude: 0, valid: false }),
      { qos: 1 },
    ),
  );
  t.is((await h.lastLocation('dev1')).status, 404, 'nothing was stored');

  // A fix at (0, 0) that says it is valid is a place like any other, from every source.
  t.is(
    (
      await h.s.request('POST', '/api/devices/dev1/locations', {
        token: h.s.adminToken,
        body: { location: { dateTime: at(4), latitude: 0, longitude: 0, valid: true } },
      })
    ).body.locations.length,
    1,
  );
  t.truthy(
    await c.publishAsync('devices/dev1/locations', JSON.stringify({ dateTime: at(5), latitude: 0, longitude: 0 }), {
      qos: 1,
    }),
  );
  t.like((await h.lastLocation('dev1')).body.lastLocation, { dateTime: at(5), latitude: 0, protocol: 'mqtt' });
});

if (withPostgres) {
  test("ingest (postgres): a REST request's locations join the trackers' group commit: stored and announced in one batch with them", async (t) => {
    const s = await startServer('postgres');
    t.teardown(() => s.stop());
    for (const id of ['tracker', 'tracker2', 'tracker3', 'client'])
      t.is((await s.request('POST', '/api/devices', { token: s.adminToken, body: { id, name: id } })).status, 201);
    const { ingest, directory, events } = s.running.services;
    const [tracker, tracker2, tracker3] = await Promise.all(
      ['tracker', 'tracker2', 'tracker3'].map(async (id) => (await directory.find(id))!),
    );
    const batches: string[][] = [];
    events.onLocations((items) => batches.push(items.map((i) => `${i.deviceId}:${i.location.protocol}`)));

    // Another connection holds the locations table: the first batches (PostgreSQL writes two at a
    // time, of different devices) wait, and what arrives meanwhile queues for the next.
    const lock = new pg.Client({ connectionString: s.storageEnv.TRACKGATE_DATABASE_URL });
    await lock.connect();
    t.teardown(() => lock.end());
    await lock.query('begin');
    await lock.query('lock table locations in exclusive mode');
    // what comes next waits for what came before: both writers waiting for the lock (PostgreSQL
    // shows them), the REST request's submission made (submit() queues it at once)
    const waiting = await lockWaiters(t, s.storageEnv.TRACKGATE_DATABASE_URL);
    const submitted: string[] = [];
    const submit = ingest.submit;
    ingest.submit = (device, ...rest) => (submitted.push(device.id), submit(device, ...rest));
    const first = ingest.submit(tracker, 'test', [trackerReport(1, 10)]);
    await until('the first batch waits for the lock', async () => (await waiting()) >= 1);
    const other = ingest.submit(tracker2, 'test', [trackerReport(1, 11)]);
    await until('the second batch waits for the lock', async () => (await waiting()) >= 2);
    const rest = s.request('POST', '/api/devices/client/locations', {
      token: s.adminToken,
      body: { location: { dateTime: at(2), latitude: 20, longitude: 20 } },
    });
    await until("the REST request's locations submitted", () => submitted.includes('client'));
    const second = ingest.submit(tracker3, 'test', [trackerReport(3, 30)]);
    await lock.query('commit');

    await Promise.all([first, other, second]);
    const answer = await rest;
    t.is(answer.status, 201, 'answered after its commit');
    t.like(answer.body.locations[0], { dateTime: at(2), latitude: 20, protocol: 'rest' });
    // PostgreSQL commits the two waiting batches side by side, and the third starts as soon as
    // either is done: the order of the announcements is not fixed, what went together is.
    t.is(batches.length, 3);
    t.deepEqual(batches.map((b) => [...b].sort().join(' + ')).sort(), [
      'client:rest + tracker3:test',
      'tracker2:test',
      'tracker:test',
    ]);
  });
}
