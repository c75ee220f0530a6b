import test from 'ava';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  createDevice,
  startTestServer,
  testInGatewayModes,
  type GatewayMode,
  type Teardown,
  type TestServer,
} from '../../helpers/server.js';
import { until } from '../../helpers/wait.js';
import { vectorsDir } from '../../helpers/vectors.js';

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0) / 1000;

async function start(t: Teardown, mode: GatewayMode, devices = ['car-1', 'car-2']): Promise<TestServer> {
  const s = await startTestServer(t, { env: { TRACKGATE_FLESPI_PORT: '0', ...mode.env } });
  for (const id of devices) await createDevice(s, id, { name: id, alertEmails: [] });
  return s;
}

const post = (s: TestServer, body: string): Promise<Response> =>
  fetch(`http://127.0.0.1:${s.running.ports.flespi}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });

const message = (ident: string, sec: number, lat: number, extra: Record<string, unknown> = {}) => ({
  ident,
  timestamp: T0 + sec,
  'position.latitude': lat,
  'position.longitude': 18.5,
  'position.speed': 36,
  'position.valid': true,
  ...extra,
});

const locations = async (
  s: TestServer,
  id: string,
): Promise<{ dateTime: string; latitude: number; protocol: string }[]> =>
  (
    await s.request('POST', `/api/devices/${encodeURIComponent(id)}/locations`, {
      token: s.adminToken,
      body: { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' },
    })
  ).body.locations;

testInGatewayModes(
  test,
  "gateway.flespi: one POST of several devices' messages stores each device's, then answers 200; an unknown ident is skipped and listed",
  async (t, mode) => {
    const s = await start(t, mode);
    const body = JSON.stringify([
      message('car-1', 0, 59.1),
      message('car-2', 1, 59.2),
      message('stranger', 2, 59.3),
      message('car-1', 3, 59.4),
      { timestamp: T0 },
    ]);
    const answer = await post(s, body);
    t.is(answer.status, 200);
    t.is(await answer.text(), '');
    t.deepEqual(
      (await locations(s, 'car-1')).map((l) => [l.dateTime, l.latitude, l.protocol]),
      [
        ['2026-03-01T10:00:00.000Z', 59.1, 'flespi'],
        ['2026-03-01T10:00:03.000Z', 59.4, 'flespi'],
      ],
      'stored by the time 200 arrived',
    );
    t.deepEqual(
      (await locations(s, 'car-2')).map((l) => l.latitude),
      [59.2],
    );
    await until('the unknown ident listed', async () =>
      (await s.running.services.directory.recentUnknown(100)).some(
        (u) => u.identifier === 'stranger' && u.protocol === 'flespi',
      ),
    );
  },
);

testInGatewayModes(test, 'gateway.flespi: an alarm event raises an alert', async (t, mode) => {
  const s = await start(t, mode);
  t.is((await post(s, JSON.stringify([message('car-1', 5, 59.1, { 'alarm.event.trigger': true })]))).status, 200);
  const alerts = await s.request('POST', '/api/devices/car-1/alerts', {
    token: s.adminToken,
    body: { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' },
  });
  t.is(alerts.body.alerts.length, 1, JSON.stringify(alerts.body));
  t.like(alerts.body.alerts[0], { alertName: 'General', dateTime: '2026-03-01T10:00:05.000Z' });
});

testInGatewayModes(
  test,
  'gateway.flespi: when storage fails the answer is 503, and the resent request is stored',
  async (t, mode) => {
    const s = await start(t, mode);
    const body = JSON.stringify([message('car-1', 0, 59.1), message('car-2', 1, 59.2)]);
    await s.running.db.schema.renameTable('locations', 'locations_away');
    t.is((await post(s, body)).status, 503);
    await s.running.db.schema.renameTable('locations_away', 'locations');
    t.is((await post(s, body)).status, 200);
    t.is((await locations(s, 'car-1')).length, 1);
    t.is((await locations(s, 'car-2')).length, 1);
  },
);

testInGatewayModes(
  test,
  'gateway.flespi: a body over 1 MiB is a 413, one that is no JSON array a 400; an empty array is a 200',
  async (t, mode) => {
    const s = await start(t, mode);
    const big = JSON.stringify([message('car-1', 0, 59.1, { 'custom.pad': 'x'.repeat(1024 * 1024) })]);
    t.is((await post(s, big)).status, 413);
    t.is((await post(s, '{"ident":"car-1"}')).status, 400);
    t.is((await post(s, '[]')).status, 200);
    t.is((await locations(s, 'car-1')).length, 0);
  },
);

testInGatewayModes(test, "gateway.flespi: the reference's test request (vector line 1) is stored", async (t, mode) => {
  const s = await start(t, mode, ['605630']);
  const line = readFileSync(path.join(vectorsDir(), 'flespi.jsonl'), 'utf8').split('\n')[0];
  const { frame } = JSON.parse(line) as { frame: { body: string } };
  t.is((await post(s, frame.body)).status, 200);
  const stored = await locations(s, '605630');
  t.is(stored.length, 2);
  t.like(stored[1], { dateTime: '2014-02-13T06:15:12.000Z', latitude: 57.986744, protocol: 'flespi' });
});
