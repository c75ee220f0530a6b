import test from 'ava';
import { backends } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { startSmtpReceiver } from '../helpers/receivers.js';
import { TrackerClient } from '../helpers/tracker-client.js';
import * as F from '../helpers/frames.js';

async function withDevice(s: TestServer, id = 'dev1'): Promise<void> {
  const r = await s.request('POST', '/api/devices', { token: s.adminToken, body: { id, name: id } });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
}

const times = (r: { body: { locations: { dateTime: string }[] } }): string[] => r.body.locations.map((l) => l.dateTime);

for (const backend of await backends()) {
  test(`api.locations (${backend}): store one or many, one per dateTime, lastLocation is the latest fix`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    await withDevice(s);
    const token = s.adminToken;
    const one = await s.request('POST', '/api/devices/dev1/locations', {
      token,
      body: {
        location: {
          dateTime: '2026-03-01T10:00:00Z',
          latitude: 40.4,
          longitude: -3.7,
          speed: 12.5,
          course: 90,
          battery: 80,
          attributes: { ignition: true },
        },
      },
    });
    t.is(one.status, 201);
    t.like(one.body.locations[0], {
      dateTime: '2026-03-01T10:00:00.000Z',
      latitude: 40.4,
      longitude: -3.7,
      speed: 12.5,
      protocol: 'rest',
      attributes: { ignition: true },
    });
    t.truthy(one.body.locations[0].serverTime);
    // Older fixes received later do not become the last location; offsets are normalised to UTC.
    const many = await s.request('POST', '/api/devices/dev1/locations', {
      token,
      body: {
        locations: [
          { dateTime: '2026-03-01T09:00:00+01:00', latitude: 1, longitude: 1 },
          { dateTime: '2026-03-01T07:00:00Z', latitude: 2, longitude: 2 },
        ],
      },
    });
    t.is(many.status, 201);
    t.deepEqual(times(many), ['2026-03-01T08:00:00.000Z', '2026-03-01T07:00:00.000Z']);
    const last = await s.request('GET', '/api/devices/dev1/lastLocation', { token });
    t.is(last.status, 200);
    t.is(last.body.lastLocation.dateTime, '2026-03-01T10:00:00.000Z');
    const range = await s.request('POST', '/api/devices/dev1/locations', {
      token,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    });
    t.is(range.status, 200);
    t.deepEqual(times(range), ['2026-03-01T07:00:00.000Z', '2026-03-01T08:00:00.000Z', '2026-03-01T10:00:00.000Z']);
    t.is(range.body.nextCursor, null);
  });

  test(`api.locations (${backend}): an identical resend changes nothing; other values for the same dateTime replace the stored location`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    await withDevice(s);
    const token = s.adminToken;
    const post = (location: object) => s.request('POST', '/api/devices/dev1/locations', { token, body: { location } });
    const original = {
      dateTime: '2026-03-01T10:00:00Z',
      latitude: 40.4,
      longitude: -3.7,
      speed: 12.5,
      attributes: { ignition: true },
    };
    const first = await post(original);
    t.is(first.status, 201);
    await new Promise((r) => setTimeout(r, 5)); // a later serverTime for the resends
    const resend = await post({ ...original, dateTime: '2026-03-01T11:00:00+01:00' });
    t.is(resend.status, 201);
    t.deepEqual(resend.body.locations, first.body.locations, 'the same fix again: the stored one, serverTime included');
    const correction = await post({ ...original, latitude: 41, speed: 20 });
    t.is(correction.status, 201);
    t.like(
      correction.body.locations[0],
      { dateTime: '2026-03-01T10:00:00.000Z', latitude: 41, speed: 20 },
      'the answer shows what is stored now',
    );
    t.not(correction.body.locations[0].serverTime, first.body.locations[0].serverTime);
    t.deepEqual(
      (await s.request('GET', '/api/devices/dev1/lastLocation', { token })).body.lastLocation,
      correction.body.locations[0],
      'the last location follows the correction',
    );
    const range = await s.request('POST', '/api/devices/dev1/locations', {
      token,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    });
    t.deepEqual(range.body.locations, correction.body.locations, 'one row for the dateTime, holding the correction');
    const twice = await s.request('POST', '/api/devices/dev1/locations', {
      token,
      body: {
        locations: [
          { ...original, dateTime: '2026-03-01T12:00:00Z' },
          { ...original, dateTime: '2026-03-01T12:00:00Z', latitude: 42 },
        ],
      },
    });
    t.is(twice.status, 201);
    t.deepEqual(
      twice.body.locations.map((l: { latitude: number }) => l.latitude),
      [42],
      'the same dateTime twice in one request: the last wins',
    );
    t.is((await s.request('GET', '/api/devices/dev1/lastLocation', { token })).body.lastLocation.latitude, 42);
  });

  test(`api.locations (${backend}): a field without a value is left out, never null, whether the location came over REST or from a tracker`, async (t) => {
    const s = await startServer(backend, { env: { TRACKGATE_TELTONIKA_PORT: '0' } });
    t.teardown(() => s.stop());
    const imei = '356307042441013';
    await withDevice(s, imei);
    const token = s.adminToken;
    const rest = await s.request('POST', `/api/devices/${imei}/locations`, {
      token,
      body: {
        location: { dateTime: '2026-03-01T09:00:00Z', latitude: 1, longitude: 2, speed: null, course: 10, fuel: null },
      },
    });
    t.is(rest.status, 201);
    const c = await TrackerClient.connect(s.running.ports.teltonika);
    t.teardown(() => c.end());
    c.write(F.teltonikaLogin(imei));
    t.deepEqual(await c.read(1), Buffer.from([1]));
    c.write(
      F.teltonikaAvl([{ time: new Date('2026-03-01T10:00:00Z'), lat: 40.4, lon: -3.7, speedKmh: 42, course: 90 }]),
    );
    t.deepEqual(await c.read(4), Buffer.from('00000001', 'hex'));
    const range = (
      await s.request('POST', `/api/devices/${imei}/locations`, {
        token,
        body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
      })
    ).body.locations;
    const last = (await s.request('GET', `/api/devices/${imei}/lastLocation`, { token })).body.lastLocation;
    t.deepEqual(
      range.map((l: { protocol: string }) => l.protocol),
      ['rest', 'teltonika'],
    );
    for (const [what, l] of [
      ['REST answer', rest.body.locations[0]],
      ['REST location read back', range[0]],
      ['tracker location', range[1]],
      ['lastLocation', last],
    ]) {
      t.deepEqual(
        Object.entries(l)
          .filter(([, v]) => v === null)
          .map(([k]) => k),
        [],
        `${what}: no null values`,
      );
    }
    t.false('speed' in range[0], 'a null sent over REST is left out');
    t.false('fuel' in range[1] || 'accuracy' in range[1], 'what the tracker did not report is left out');
    t.like(range[1], { speed: 42, course: 90 });
  });

  test(`api.alerts (${backend}): an alert raised without a position takes the last location's, stored and in the e-mail`, async (t) => {
    const smtp = await startSmtpReceiver();
    const s = await startServer(backend, { env: { TRACKGATE_SMTP_URL: smtp.url } });
    t.teardown(async () => {
      await s.stop();
      await smtp.close();
    });
    const token = s.adminToken;
    t.is(
      (
        await s.request('POST', '/api/devices', {
          token,
          body: { id: 'dev1', name: 'Truck 7', alertEmails: ['ops@example.com'] },
        })
      ).status,
      201,
    );
    const early = await s.request('POST', '/api/devices/dev1/alerts', {
      token,
      body: { alert: { dateTime: '2026-03-01T09:00:00Z', alertName: 'SOSButton' } },
    });
    t.like(early.body.alerts[0], { latitude: null, longitude: null }, 'no location yet: no position');
    await s.request('POST', '/api/devices/dev1/locations', {
      token,
      body: {
        locations: [
          { dateTime: '2026-03-01T10:00:00Z', latitude: 40.4168, longitude: -3.7038 },
          { dateTime: '2026-03-01T08:00:00Z', latitude: 1, longitude: 1 },
        ],
      },
    });
    const sos = await s.request('POST', '/api/devices/dev1/alerts', {
      token,
      body: { alert: { dateTime: '2026-03-01T10:05:00Z', alertName: 'SOSButton', text: 'Help' } },
    });
    t.is(sos.status, 201);
    t.like(sos.body.alerts[0], { latitude: 40.4168, longitude: -3.7038 });
    const stored = await s.request('POST', '/api/devices/dev1/alerts', {
      token,
      body: { from: '2026-03-01T10:00:00Z', to: '2026-03-01T11:00:00Z' },
    });
    t.like(stored.body.alerts[0], { latitude: 40.4168, longitude: -3.7038 }, 'stored with the position');
    const given = await s.request('POST', '/api/devices/dev1/alerts', {
      token,
      body: { alert: { dateTime: '2026-03-01T10:06:00Z', alertName: 'SpeedLimit', latitude: 5, longitude: 6 } },
    });
    t.like(given.body.alerts[0], { latitude: 5, longitude: 6 }, 'a position sent with the alert is kept');
    const half = await s.request('POST', '/api/devices/dev1/alerts', {
      token,
      body: { alert: { alertName: 'SpeedLimit', latitude: 5 } },
    });
    t.is(half.status, 400);
    t.is(half.body.details.field, 'alert.longitude');
    await s.running.services.notifications.drain();
    const mail = smtp.mails.find((m) => /Help/.test(m.text));
    t.truthy(mail);
    t.regex(mail!.text, /Position: 40\.41680, -3\.70380/);
    t.notRegex(mail!.text, /Position: unknown/);
  });

  test(`api.locations (${backend}): long ranges are read in pages with limit and cursor; store-and-read in one call`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    await withDevice(s);
    const token = s.adminToken;
    const locations = Array.from({ length: 25 }, (_, i) => ({
      dateTime: new Date(Date.UTC(2026, 2, 1, 0, i)).toISOString(),
      latitude: i,
      longitude: i,
    }));
    t.is((await s.request('POST', '/api/devices/dev1/locations', { token, body: { locations } })).status, 201);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await s.request('POST', '/api/devices/dev1/locations', {
        token,
        body: { from: '2026-03-01T00:00:00Z', to: '2026-03-01T00:20:00Z', limit: 7, cursor },
      });
      t.is(r.status, 200);
      seen.push(...times(r));
      cursor = r.body.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    t.is(pages, 3);
    t.deepEqual(
      seen,
      locations.slice(0, 21).map((l) => new Date(l.dateTime).toISOString()),
    );
    const both = await s.request('POST', '/api/devices/dev1/locations', {
      token,
      body: {
        location: { dateTime: '2026-03-01T00:30:00Z', latitude: 5, longitude: 5 },
        from: '2026-03-01T00:24:00Z',
        to: '2026-03-01T01:00:00Z',
      },
    });
    t.is(both.status, 200);
    t.deepEqual(times(both), ['2026-03-01T00:24:00.000Z', '2026-03-01T00:30:00.000Z']);
    const badCursor = await s.request('POST', '/api/devices/dev1/locations', {
      token,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-01T01:00:00Z', cursor: 'nonsense' },
    });
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
    const last = async (): Promise<{ status: number; body: any }> =>
      s.request('GET', '/api/devices/dev1/lastLocation', { token });
    const store = (minute: number) =>
      s.request('POST', '/api/devices/dev1/locations', {
        token,
        body: {
          location: {
            dateTime: new Date(Date.UTC(2026, 2, 1, 0, minute)).toISOString(),
            latitude: minute,
            longitude: 1,
          },
        },
      });
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
    const sos = await s.request('POST', '/api/devices/dev1/alerts', {
      token,
      body: {
        alert: { dateTime: '2026-03-01T10:00:00Z', alertName: 'SOSButton', text: 'Help', latitude: 40, longitude: -3 },
      },
    });
    t.is(sos.status, 201);
    t.like(sos.body.alerts[0], {
      alertName: 'SOSButton',
      text: 'Help',
      dateTime: '2026-03-01T10:00:00.000Z',
      alerts: ['SOSButton'],
      latitude: 40,
      longitude: -3,
    });
    t.true(Array.isArray(sos.body.alerts[0].notifications));
    await s.request('POST', '/api/devices/dev1/alerts', {
      token,
      body: { alert: { dateTime: '2026-03-01T11:00:00Z', alertName: 'SpeedLimit' } },
    });
    await s.request('POST', '/api/devices/dev1/alerts', {
      token,
      body: { alert: { dateTime: '2026-03-03T11:00:00Z', alertName: 'SOSButton' } },
    });
    const all = await s.request('POST', '/api/devices/dev1/alerts', {
      token,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    });
    t.deepEqual(
      all.body.alerts.map((a: { alertName: string }) => a.alertName),
      ['SOSButton', 'SpeedLimit'],
    );
    const filtered = await s.request('POST', '/api/devices/dev1/alerts', {
      token,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-04T00:00:00Z', alertName: 'SOSButton' },
    });
    t.is(filtered.body.alerts.length, 2);
    const paged = await s.request('POST', '/api/devices/dev1/alerts', {
      token,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-04T00:00:00Z', limit: 2 },
    });
    t.is(paged.body.alerts.length, 2);
    const rest = await s.request('POST', '/api/devices/dev1/alerts', {
      token,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-04T00:00:00Z', limit: 2, cursor: paged.body.nextCursor },
    });
    t.deepEqual(
      rest.body.alerts.map((a: { dateTime: string }) => a.dateTime),
      ['2026-03-03T11:00:00.000Z'],
    );
    t.is(
      (await s.request('POST', '/api/devices/dev1/alerts', { token, body: { alert: { text: 'no name' } } })).status,
      400,
    );
  });
}
