import test from 'ava';
import { backends } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';

async function withDevice(s: TestServer, id = 'dev1'): Promise<void> {
  const r = await s.request('POST', '/api/devices', { token: s.adminToken, body: { id, name: id } });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
}

const times = (r: { body: { locations: { dateTime: string }[] } }): string[] => r.body.locations.map((l) => l.dateTime);

for (const backend of await backends()) {
  test(`api.locations (${backend}): store one or many, idempotent on dateTime, lastLocation is the latest fix`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    await withDevice(s);
    const token = s.adminToken;
    const one = await s.request('POST', '/api/devices/dev1/locations', { token, body: { location: { dateTime: '2026-03-01T10:00:00Z', latitude: 40.4, longitude: -3.7, speed: 12.5, course: 90, battery: 80, attributes: { ignition: true } } } });
    t.is(one.status, 201);
    t.like(one.body.locations[0], { dateTime: '2026-03-01T10:00:00.000Z', latitude: 40.4, longitude: -3.7, speed: 12.5, protocol: 'rest', attributes: { ignition: true } });
    t.truthy(one.body.locations[0].serverTime);
    // Older fixes received later do not become the last location; offsets are normalised to UTC.
    const many = await s.request('POST', '/api/devices/dev1/locations', { token, body: { locations: [
      { dateTime: '2026-03-01T09:00:00+01:00', latitude: 1, longitude: 1 },
      { dateTime: '2026-03-01T07:00:00Z', latitude: 2, longitude: 2 },
    ] } });
    t.is(many.status, 201);
    t.deepEqual(times(many), ['2026-03-01T08:00:00.000Z', '2026-03-01T07:00:00.000Z']);
    const last = await s.request('GET', '/api/devices/dev1/lastLocation', { token });
    t.is(last.status, 200);
    t.is(last.body.lastLocation.dateTime, '2026-03-01T10:00:00.000Z');
    const resend = await s.request('POST', '/api/devices/dev1/locations', { token, body: { location: { dateTime: '2026-03-01T10:00:00.000Z', latitude: 50, longitude: 50 } } });
    t.is(resend.status, 201);
    t.is(resend.body.locations[0].latitude, 40.4, 'a resend is not stored again; the original is returned');
    const range = await s.request('POST', '/api/devices/dev1/locations', { token, body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' } });
    t.is(range.status, 200);
    t.deepEqual(times(range), ['2026-03-01T07:00:00.000Z', '2026-03-01T08:00:00.000Z', '2026-03-01T10:00:00.000Z']);
    t.is(range.body.nextCursor, null);
  });

  test(`api.locations (${backend}): long ranges are read in pages with limit and cursor; store-and-read in one call`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    await withDevice(s);
    const token = s.adminToken;
    const locations = Array.from({ length: 25 }, (_, i) => ({ dateTime: new Date(Date.UTC(2026, 2, 1, 0, i)).toISOString(), latitude: i, longitude: i }));
    t.is((await s.request('POST', '/api/devices/dev1/locations', { token, body: { locations } })).status, 201);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await s.request('POST', '/api/devices/dev1/locations', { token, body: { from: '2026-03-01T00:00:00Z', to: '2026-03-01T00:20:00Z', limit: 7, cursor } });
      t.is(r.status, 200);
      seen.push(...times(r));
      cursor = r.body.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    t.is(pages, 3);
    t.deepEqual(seen, locations.slice(0, 21).map((l) => new Date(l.dateTime).toISOString()));
    const both = await s.request('POST', '/api/devices/dev1/locations', { token, body: { location: { dateTime: '2026-03-01T00:30:00Z', latitude: 5, longitude: 5 }, from: '2026-03-01T00:24:00Z', to: '2026-03-01T01:00:00Z' } });
    t.is(both.status, 200);
    t.deepEqual(times(both), ['2026-03-01T00:24:00.000Z', '2026-03-01T00:30:00.000Z']);
    const badCursor = await s.request('POST', '/api/devices/dev1/locations', { token, body: { from: '2026-03-01T00:00:00Z', to: '2026-03-01T01:00:00Z', cursor: 'nonsense' } });
    t.is(badCursor.status, 400);
    t.is(badCursor.body.code, 'INVALID_CURSOR');
    t.is((await s.request('GET', '/api/devices/nope/lastLocation', { token })).status, 404);
    await withDevice(s, 'empty');
    const none = await s.request('GET', '/api/devices/empty/lastLocation', { token });
    t.is(none.status, 404);
    t.is(none.body.code, 'LOCATION_NOT_FOUND');
  });

  test(`api.lastLocation (${backend}): every read sees the writes before it, through deletion and re-creation`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    await withDevice(s);
    const token = s.adminToken;
    const last = async (): Promise<{ status: number; body: any }> => s.request('GET', '/api/devices/dev1/lastLocation', { token });
    const store = (minute: number) => s.request('POST', '/api/devices/dev1/locations', { token, body: { location: { dateTime: new Date(Date.UTC(2026, 2, 1, 0, minute)).toISOString(), latitude: minute, longitude: 1 } } });
    t.is((await last()).body.code, 'LOCATION_NOT_FOUND');
    await store(10);
    t.is((await last()).body.lastLocation.latitude, 10, 'the first fix, right after a read of none');
    await store(20);
    t.is((await last()).body.lastLocation.latitude, 20);
    await store(15);
    t.is((await last()).body.lastLocation.latitude, 20, 'an older fix does not replace it');
    // Reads racing with writes: once all are done, the answer is the latest fix.
    const minutes = Array.from({ length: 40 }, (_, i) => 21 + i);
    const reads: Promise<unknown>[] = [];
    await Promise.all(minutes.map((m) => (reads.push(last()), store(m))));
    await Promise.all(reads);
    const after = await last();
    t.is(after.body.lastLocation.latitude, 60);
    t.is(typeof after.body.apiUsage, 'number', 'usage follows the embedded location');
    t.is((await s.request('DELETE', '/api/devices/dev1', { token })).status, 200);
    t.is((await last()).body.code, 'DEVICE_NOT_FOUND', 'a deleted device has no last location');
    await withDevice(s);
    t.is((await last()).body.code, 'LOCATION_NOT_FOUND', 'nor does the device created again with its id');
  });

  test(`api.alerts (${backend}): raise an alert, read a range filtered by alertName`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    await withDevice(s);
    const token = s.adminToken;
    const sos = await s.request('POST', '/api/devices/dev1/alerts', { token, body: { alert: { dateTime: '2026-03-01T10:00:00Z', alertName: 'SOSButton', text: 'Help', latitude: 40, longitude: -3 } } });
    t.is(sos.status, 201);
    t.like(sos.body.alerts[0], { alertName: 'SOSButton', text: 'Help', dateTime: '2026-03-01T10:00:00.000Z', alerts: ['SOSButton'], latitude: 40, longitude: -3 });
    t.true(Array.isArray(sos.body.alerts[0].notifications));
    await s.request('POST', '/api/devices/dev1/alerts', { token, body: { alert: { dateTime: '2026-03-01T11:00:00Z', alertName: 'SpeedLimit' } } });
    await s.request('POST', '/api/devices/dev1/alerts', { token, body: { alert: { dateTime: '2026-03-03T11:00:00Z', alertName: 'SOSButton' } } });
    const all = await s.request('POST', '/api/devices/dev1/alerts', { token, body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' } });
    t.deepEqual(all.body.alerts.map((a: { alertName: string }) => a.alertName), ['SOSButton', 'SpeedLimit']);
    const filtered = await s.request('POST', '/api/devices/dev1/alerts', { token, body: { from: '2026-03-01T00:00:00Z', to: '2026-03-04T00:00:00Z', alertName: 'SOSButton' } });
    t.is(filtered.body.alerts.length, 2);
    const paged = await s.request('POST', '/api/devices/dev1/alerts', { token, body: { from: '2026-03-01T00:00:00Z', to: '2026-03-04T00:00:00Z', limit: 2 } });
    t.is(paged.body.alerts.length, 2);
    const rest = await s.request('POST', '/api/devices/dev1/alerts', { token, body: { from: '2026-03-01T00:00:00Z', to: '2026-03-04T00:00:00Z', limit: 2, cursor: paged.body.nextCursor } });
    t.deepEqual(rest.body.alerts.map((a: { dateTime: string }) => a.dateTime), ['2026-03-03T11:00:00.000Z']);
    t.is((await s.request('POST', '/api/devices/dev1/alerts', { token, body: { alert: { text: 'no name' } } })).status, 400);
  });
}
