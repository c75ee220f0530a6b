/**
 * Distance (docs/rest.md "Distance"): each stored location carries `totalDistance`, the km its
 * device travelled up to it, and the device carries its running total; invalid fixes, jumps and a
 * parked tracker's jitter add nothing; late fixes leave the running total alone; it survives a
 * restart. Over REST on both databases, and from a real Teltonika socket in both gateway modes.
 */
import test from 'ava';
import { backends, createStorage } from '../helpers/backends.js';
import { createDevice, GATEWAY_MODES, startServer, type TestServer } from '../helpers/server.js';
import { teltonikaAvl } from '../helpers/frames.js';
import { teltonikaSession } from '../helpers/tracker-client.js';
import { until } from '../helpers/wait.js';
import { haversineKm } from '../../core/locations/distance.js';

const T0 = Date.UTC(2026, 5, 1, 8);
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
/** 0.001 degree of latitude: the leg of each fix of the drive */
const LEG_KM = haversineKm({ latitude: 40, longitude: -3 }, { latitude: 40.001, longitude: -3 });

type Loc = Record<string, unknown> & { dateTime: string; totalDistance?: number };

async function post(s: TestServer, id: string, locations: Record<string, unknown>[]): Promise<Loc[]> {
  const r = await s.request('POST', `/api/devices/${id}/locations`, { token: s.adminToken, body: { locations } });
  if (r.status !== 201) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
  return r.body.locations as Loc[];
}
const history = async (s: TestServer, id: string): Promise<Loc[]> =>
  (
    await s.request('POST', `/api/devices/${id}/locations`, {
      token: s.adminToken,
      body: { from: at(-3600), to: at(86_400), limit: 1000 },
    })
  ).body.locations as Loc[];
const deviceTotal = async (s: TestServer, id: string): Promise<number> =>
  (await s.request('GET', `/api/devices/${id}`, { token: s.adminToken })).body.device.totalDistance as number;
const lastTotal = async (s: TestServer, id: string): Promise<number | undefined> =>
  ((await s.request('GET', `/api/devices/${id}/lastLocation`, { token: s.adminToken })).body.lastLocation as Loc)
    .totalDistance;
const near = (got: number | undefined, want: number, what: string) =>
  Math.abs((got ?? Number.NaN) - want) <= 0.002 ? undefined : `${what}: ${got} km, expected ${want.toFixed(4)}`;

for (const backend of await backends()) {
  test(`distance (${backend}): a drive, a parked tracker's jitter, a jump, an invalid fix, late fixes and a restart`, async (t) => {
    const storage = await createStorage(backend);
    t.teardown(() => storage.cleanup());
    let s = await startServer(backend, { storageEnv: storage.env });
    let running = true;
    t.teardown(() => (running ? s.stop() : undefined));
    await createDevice(s, 'dist-1');
    t.is(await deviceTotal(s, 'dist-1'), 0, 'no position yet');

    // 60 legs of a straight drive at 40 km/h, with the tracker's own odometer beside
    const drive = Array.from({ length: 61 }, (_, i) => ({
      dateTime: at(i * 10),
      latitude: 40 + i * 0.001,
      longitude: -3,
      speed: 40,
      milleage: 12_000 + i * 0.111,
    }));
    const stored = await post(s, 'dist-1', drive);
    t.is(stored[0].totalDistance, 0);
    t.falsy(near(stored[60].totalDistance, 60 * LEG_KM, 'after the drive'));
    t.is(stored[60].milleage, 12_000 + 60 * 0.111, "the tracker's odometer is kept beside it");
    const afterDrive = stored[60].totalDistance!;

    // parked: 20 fixes wandering within 15 m, speed 0
    const parked = Array.from({ length: 20 }, (_, i) => ({
      dateTime: at(610 + i * 10),
      latitude: 40.06 + ((i % 3) - 1) * 0.0001,
      longitude: -3 + ((i % 2) - 0.5) * 0.0001,
      speed: 0,
    }));
    const jitter = await post(s, 'dist-1', parked);
    t.deepEqual(
      jitter.map((l) => l.totalDistance),
      parked.map(() => afterDrive),
      'jitter while parked adds nothing',
    );

    // a fix 50 km away 10 s later, then one back on the road; an invalid fix far away
    const jumpAndBack = await post(s, 'dist-1', [
      { dateTime: at(820), latitude: 40.5, longitude: -3, speed: 40 },
      { dateTime: at(830), latitude: 41, longitude: 0, valid: false },
      { dateTime: at(840), latitude: 40.061, longitude: -3, speed: 40 },
    ]);
    t.is(jumpAndBack[0].totalDistance, afterDrive, 'the jump adds nothing');
    t.is(jumpAndBack[1].totalDistance, afterDrive, 'the invalid fix adds nothing');
    const back = jumpAndBack[2].totalDistance!;
    t.falsy(near(back, afterDrive + LEG_KM, 'back on the road, from where it was parked'));
    t.is(await deviceTotal(s, 'dist-1'), back);
    t.is(await lastTotal(s, 'dist-1'), back);

    // late: a fix between the first two, and an identical resend of an old fix
    const late = await post(s, 'dist-1', [{ dateTime: at(5), latitude: 40.0005, longitude: -3, speed: 40 }]);
    t.falsy(near(late[0].totalDistance, LEG_KM / 2, 'the late fix sits between its neighbours'));
    const resend = await post(s, 'dist-1', [drive[30]]);
    t.falsy(near(resend[0].totalDistance, 30 * LEG_KM, 'a resend answers the stored fix'));
    t.is(await deviceTotal(s, 'dist-1'), back, 'late fixes leave the running total alone');
    const all = await history(s, 'dist-1');
    t.is(all.length, 61 + 20 + 3 + 1);
    for (let i = 1; i < all.length; i++)
      if ((all[i].totalDistance ?? 0) < (all[i - 1].totalDistance ?? 0))
        t.fail(`the total falls between ${all[i - 1].dateTime} and ${all[i].dateTime}`);

    // a restart: the count goes on from the stored state
    await s.stop();
    running = false;
    s = await startServer(backend, { storageEnv: storage.env });
    running = true;
    t.is(await deviceTotal(s, 'dist-1'), back);
    const next = await post(s, 'dist-1', [{ dateTime: at(850), latitude: 40.062, longitude: -3, speed: 40 }]);
    t.falsy(near(next[0].totalDistance, back + LEG_KM, 'after the restart'));
  });
}

for (const mode of GATEWAY_MODES) {
  test(`distance: a Teltonika tracker's records get their totals, in order across frames [${mode.name}]`, async (t) => {
    const s = await startServer('sqlite', { env: { ...mode.env, TRACKGATE_TELTONIKA_PORT: '0' } });
    t.teardown(() => s.stop());
    const imei = '356307042441013';
    await createDevice(s, imei);
    const c = await teltonikaSession(t, s.running.ports.teltonika, imei);
    const fixes = Array.from({ length: 20 }, (_, i) => ({
      time: new Date(T0 + i * 10_000),
      lat: 40 + i * 0.001,
      lon: -3,
      speedKmh: 40,
    }));
    for (const part of [fixes.slice(0, 10), fixes.slice(10)]) {
      c.write(teltonikaAvl(part));
      t.is((await c.read(4)).readUInt32BE(0), part.length, 'acknowledged after the commit');
    }
    await until('the last fix stored', async () => (await lastTotal(s, imei)) !== undefined);
    t.falsy(near(await lastTotal(s, imei), 19 * LEG_KM, 'last location'));
    t.falsy(near(await deviceTotal(s, imei), 19 * LEG_KM, 'the device'));
    const all = await history(s, imei);
    t.deepEqual(
      all.map((l) => Math.round((l.totalDistance as number) / LEG_KM)),
      fixes.map((_, i) => i),
    );
  });
}
