import test from 'ava';
import { once } from 'node:events';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createStorage, postgresAvailable } from '../../helpers/backends.js';
import { ADMIN_KEY, testEnv } from '../../helpers/server.js';
import { teltonikaSession, type TrackerClient } from '../../helpers/tracker-client.js';
import { spawnTrackgate } from '../../helpers/spawn-trackgate.js';
import { udpExchange } from '../../helpers/udp.js';
import * as F from '../../helpers/frames.js';
import { PATIENCE_MS, until } from '../../helpers/wait.js';
import { closeDb, openDb } from '../../../core/db/db.js';

const T0 = Date.UTC(2026, 2, 1, 8);
const TRACKERS = 6;
const PHONE = 'phone-stop';
const imei = (i: number) => `35630704244${String(i).padStart(4, '0')}`;
/** tracker i's frame n: one fix, its own time */
const fixTime = (i: number, n: number) => T0 + i * 60_000 + n * 1000;
const frame = (i: number, n: number) => F.teltonikaAvl([{ time: new Date(fixTime(i, n)), lat: 40 + i / 100, lon: -3 }]);

/** Holds every write of locations until `release` (PostgreSQL: the table locked; SQLite: the file's write lock, the core waiting in its busy timeout). */
async function holdWrites(env: Record<string, string>): Promise<{ release(): Promise<void> }> {
  if (env.TRACKGATE_DATABASE_URL) {
    const other = new pg.Client({ connectionString: env.TRACKGATE_DATABASE_URL });
    await other.connect();
    await other.query('BEGIN');
    await other.query('LOCK TABLE locations IN EXCLUSIVE MODE');
    return {
      async release() {
        await other.query('ROLLBACK');
        await other.end();
      },
    };
  }
  const file = new Database(path.join(env.TRACKGATE_DATA_DIR, 'trackgate.sqlite'));
  file.exec('BEGIN IMMEDIATE');
  return {
    async release() {
      file.exec('ROLLBACK');
      file.close();
    },
  };
}

interface Line {
  level: number;
  time: number;
  msg: string;
  role?: string;
  remote?: string;
  connections?: number;
}

const stops = [
  { how: 'SIGTERM to trackgate alone (docker stop, kill)', group: false },
  { how: 'SIGTERM to its whole process group (systemctl stop)', group: true },
];

for (const { how, group } of stops) {
  test.serial(
    `gateway.ipc stop: ${how} with trackers on a gateway process and frames in flight logs one summary line per gateway process and no error or line per tracker; every acknowledged frame is stored`,
    async (t) => {
      // PostgreSQL holds a write without holding the core's event loop: frames are in flight for either signal
      const backend = (await postgresAvailable()) ? 'postgres' : 'sqlite';
      const storage = await createStorage(backend);
      t.teardown(() => storage.cleanup());
      const lines: string[] = [];
      const { child, ports, gateways } = await spawnTrackgate(
        testEnv({
          ...storage.env,
          TRACKGATE_LOG_LEVEL: 'info',
          TRACKGATE_TELTONIKA_PORT: '0',
          TRACKGATE_OSMAND_PORT: '0',
          TRACKGATE_GATEWAY_PROCESSES: '1',
        }),
        { detached: true, lines },
      );
      t.teardown(() => child.kill('SIGKILL'));
      t.is(gateways.length, 1);
      const base = `http://127.0.0.1:${ports.http}`;
      const token = (
        (await (
          await fetch(`${base}/api/Auth/Token`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ userName: 'admin', apiKey: ADMIN_KEY }),
          })
        ).json()) as { token: string }
      ).token;
      for (const id of [...Array.from({ length: TRACKERS }, (_, i) => imei(i)), PHONE]) {
        const r = await fetch(`${base}/api/devices`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ id, name: `stop ${id}` }),
        });
        t.is(r.status, 201);
      }
      const trackers: TrackerClient[] = [];
      for (let i = 0; i < TRACKERS; i++) trackers.push(await teltonikaSession(t, ports.teltonika, imei(i)));
      const acknowledged: [number, number][] = [];
      for (const [i, c] of trackers.entries()) {
        c.write(frame(i, 0));
        t.is((await c.read(4)).readUInt32BE(0), 1);
        acknowledged.push([i, 0]);
      }

      // every other tracker sends a frame the core cannot commit yet: in flight at the stop
      const held = await holdWrites(storage.env);
      const inFlight = trackers.filter((_, i) => i % 2 === 1);
      // One at a time, each its own commit: on PostgreSQL (two writers) the third waits for a writer.
      // What tells that the core has a frame comes only once it is stored (its count, its ack), so
      // these pauses stand in for a condition; should the core not have one yet at the stop, the
      // assertions below that every in-flight frame is committed say so.
      for (const [i, c] of trackers.entries()) {
        if (i % 2 === 0) continue;
        c.write(frame(i, 1));
        await new Promise((r) => setTimeout(r, 100));
      }
      const exited = once(child, 'close') as Promise<[number]>;
      // and a datagram and an OsmAnd request, in flight the same way (no answer once the process is gone)
      const datagram = Promise.race([
        udpExchange(
          ports['teltonika/udp'],
          F.teltonikaDatagram(imei(0), 7, [{ time: new Date(fixTime(0, 2)), lat: 40, lon: -3 }]),
          PATIENCE_MS,
        ),
        exited.then(() => undefined),
      ]);
      const request = fetch(
        `http://127.0.0.1:${ports.osmand}/?id=${PHONE}&lat=40.5&lon=-3.5&timestamp=${T0 / 1000}`,
      ).then(
        (r) => r.status,
        () => undefined,
      );
      t.true(await inFlight[0].nothingFor(500), 'the frame waits for its commit');
      if (group) process.kill(-child.pid!, 'SIGTERM');
      else child.kill('SIGTERM');
      // the writes go on once the stop has begun: it waits for the commits in progress
      const released = until('the core is stopping', () => lines.some((l) => l.includes('"msg":"stopping"'))).then(() =>
        held.release(),
      );
      const acks = await Promise.all(
        inFlight.map((c) =>
          c.read(4).then(
            () => true,
            () => false,
          ),
        ),
      );
      for (const [k, acked] of acks.entries()) if (acked) acknowledged.push([k * 2 + 1, 1]);
      const datagramAcknowledged = (await datagram) !== undefined;
      if (datagramAcknowledged) acknowledged.push([0, 2]);
      const phoneAcknowledged = (await request) === 200;
      await released;
      const [code] = await exited;
      t.is(code, 0);
      for (const c of trackers) t.true(await c.waitClosed(), 'the stop closes every tracker connection');
      // PostgreSQL, or a gateway process stopped while the core waits: the stop met frames in flight
      if (backend === 'postgres' || group)
        t.deepEqual(
          [...acks, datagramAcknowledged, phoneAcknowledged],
          [false, false, false, false, false],
          'a frame in flight at the stop is not acknowledged',
        );

      const entries = lines.flatMap((l): Line[] => {
        try {
          return [JSON.parse(l) as Line];
        } catch {
          return [];
        }
      });
      const stopping = entries.find((e) => e.msg === 'stopping' && e.role === undefined);
      t.truthy(stopping, 'the core logged its stop');
      t.deepEqual(
        entries.filter((e) => e.level >= 50),
        [],
        'no error line',
      );
      t.deepEqual(
        entries.filter((e) => e.time >= stopping!.time && e.remote !== undefined),
        [],
        'no line per tracker once stopping',
      );
      const summaries = entries.filter((e) => e.msg.startsWith('stopping: tracker connections closed'));
      t.is(summaries.length, 1, 'one summary line');
      t.like(summaries[0], { level: 30, role: 'gateway', connections: TRACKERS });

      const db = openDb({ databaseUrl: storage.env.TRACKGATE_DATABASE_URL, dataDir: storage.env.TRACKGATE_DATA_DIR });
      const rows = (await db('locations').select('device_id', 'date_time')) as {
        device_id: string;
        date_time: number | string;
      }[];
      await closeDb(db);
      const stored = new Set(rows.map((r) => `${r.device_id}@${Number(r.date_time)}`));
      for (const [i, n] of acknowledged)
        t.true(stored.has(`${imei(i)}@${fixTime(i, n)}`), `acknowledged frame ${n} of tracker ${i} is stored`);
      if (phoneAcknowledged) t.true(stored.has(`${PHONE}@${T0}`), 'the acknowledged OsmAnd position is stored');
      // the core had them before the stop: it commits them before closing the database (unacknowledged: their trackers resend them)
      if (backend === 'postgres') {
        for (let i = 1; i < TRACKERS; i += 2)
          t.true(stored.has(`${imei(i)}@${fixTime(i, 1)}`), `frame 1 of tracker ${i}, in flight, is committed`);
        t.true(
          stored.has(`${imei(0)}@${fixTime(0, 2)}`) && stored.has(`${PHONE}@${T0}`),
          'the datagram and the OsmAnd request in flight are committed',
        );
      }
    },
  );
}
