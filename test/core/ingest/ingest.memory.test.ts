/**
 * What waits for a group commit stays in memory until it: thousands of frames wait for each one,
 * and whatever they keep alive is copied by every young-generation garbage collection meanwhile
 * (BENCHMARKS.md). These tests hold a commit open and check, with the garbage collector, that
 * a decoded report is no longer reachable while its rows wait, and that a full batch is written
 * without waiting for the end of the event loop's turn.
 */
import test from 'ava';
import v8 from 'node:v8';
import vm from 'node:vm';
import { setImmediate as turn } from 'node:timers/promises';
import { startServer, type TestServer } from '../../helpers/server.js';
import { createIngestService, type IngestService } from '../../../core/ingest/ingest.service.js';
import { handleDecoded } from '../../../gateway/shared/frame-handler.js';
import { FrameTap, type LiveFrame } from '../../../gateway/shared/frame-tap.js';
import { systemClock } from '../../../core/clock.js';
import type { DeviceRecord } from '../../../core/model/device.js';
import type { PositionReport } from '../../../core/model/report.js';
import type { DecodeResult, ProtocolModule } from '../../../protocols/types.js';
import { startTrackerGateway } from '../../../gateway/tracker-gateway.js';
import { teltonikaProtocol } from '../../../protocols/teltonika/teltonika.protocol.js';
import { teltonikaAvl, teltonikaDatagram } from '../../helpers/frames.js';
import { udpExchange } from '../../helpers/udp.js';
import { until } from '../../helpers/wait.js';
import { teltonikaSession } from '../../helpers/tracker-client.js';
import { createPublishHandler } from '../../../gateway/mqtt/mqtt.publish.js';
import { PublishBucket, Semaphore, DEFAULT_RATE } from '../../../gateway/mqtt/publish.limits.js';
import type { Session } from '../../../gateway/mqtt/mqtt.sessions.js';
import type { Client, PublishPacket } from 'aedes';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const report = (minute: number): PositionReport => ({
  fixTime: new Date(Date.UTC(2026, 2, 1, 10, minute)),
  location: { latitudeDeg: 40 + minute / 100, longitudeDeg: -3, valid: true },
  alarms: [],
  attributes: { note: 'x'.repeat(100) },
});

interface Setup {
  s: TestServer;
  devices: DeviceRecord[];
  ingest: IngestService;
  /** resolves when a transaction reaches its hook; `release()` lets the held ones commit */
  reached: () => Promise<void>;
  release: () => void;
  /** transactions that reached the hook */
  writes: () => number;
}

/** A real trackgate on SQLite with two devices, and an ingest on its database whose transactions wait in the after-write hook while `hold` is set. */
async function setup(
  t: { teardown(fn: () => unknown): void },
  options: { hold: boolean; maxBatchRows?: number; imeis?: boolean },
): Promise<Setup> {
  const s = await startServer('sqlite');
  t.teardown(() => s.stop());
  const account = await s.running.services.accounts.create({ name: 'a', licenses: 5, adminUser: 'a-admin' });
  const token = await s.token(account.userName, account.apiKey);
  const devices: DeviceRecord[] = [];
  for (const id of options.imeis ? ['356307042441013', '356307042441014'] : ['dev-a', 'dev-b']) {
    const r = await s.request('POST', '/api/devices', { token, body: { id, name: id } });
    if (r.status !== 201) throw new Error(JSON.stringify(r.body));
    const resolved = await s.running.services.directory.resolve(id, 'test', null);
    if (resolved.status !== 'ok') throw new Error(resolved.status);
    devices.push(resolved.device);
  }
  let open: () => void = () => undefined;
  let gate = options.hold ? new Promise<void>((r) => (open = r)) : Promise.resolve();
  let writes = 0;
  let arrived: () => void = () => undefined;
  let arrival = new Promise<void>((r) => (arrived = r));
  const services = s.running.services;
  const ingest = createIngestService({
    db: s.running.db,
    clock: systemClock,
    events: services.events,
    alerts: services.alertRecorder,
    logger: services.logger,
    maxBatchRows: options.maxBatchRows,
    afterWrite: async () => {
      writes++;
      arrived();
      await gate;
    },
  });
  const release = (): void => {
    gate = Promise.resolve();
    open();
  };
  // teardowns run last first: a held transaction is let go before the server stops
  t.teardown(release);
  return {
    s,
    devices,
    ingest,
    release,
    reached: () => arrival.then(() => void (arrival = new Promise<void>((r) => (arrived = r)))),
    writes: () => writes,
  };
}

/**
 * The tracker listeners (Teltonika over TCP and UDP) on `ingest`, with the real decoder: the test
 * keeps only a weak reference to each report it decodes.
 */
async function watchedGateway(
  t: { teardown(fn: () => unknown): void },
  s: TestServer,
  ingest: IngestService,
  frames?: FrameTap,
): Promise<{ gateway: { ports: Record<string, number> }; decodedReports: WeakRef<object>[] }> {
  const decodedReports: WeakRef<object>[] = [];
  const watch = (r: DecodeResult): DecodeResult => {
    for (const m of r.messages) decodedReports.push(new WeakRef(m));
    return r;
  };
  const watched: ProtocolModule = {
    ...teltonikaProtocol,
    decode: (frame, ctx) => watch(teltonikaProtocol.decode!(frame, ctx)),
    decodeDatagram: (datagram, ctx) => watch(teltonikaProtocol.decodeDatagram!(datagram, ctx)),
  };
  const services = s.running.services;
  const gateway = await startTrackerGateway({
    host: '127.0.0.1',
    protocols: { teltonika: watched },
    ports: { teltonika: 0 },
    clock: systemClock,
    checksum: 'strict',
    idleTimeoutSeconds: 60,
    directory: services.directory,
    ingest,
    commands: services.commands,
    commandWaitMs: 1000,
    logger: services.logger,
    frames,
  });
  t.teardown(() => gateway.stop());
  return { gateway, decodedReports };
}

/** Whether `ref`'s target is gone after a full collection (the turns let WeakRef's own hold on it lapse). */
async function collectedNow(ref: WeakRef<object>): Promise<boolean> {
  await turn();
  await turn();
  gc();
  return ref.deref() === undefined;
}

/**
 * Whether `ref`'s target becomes garbage: collected again and again until it is gone, or
 * PATIENCE_MS passes. One collection after two turns was not always enough on a busy machine,
 * where a reference on its way out (a socket callback not yet run) still held it then.
 */
async function collected(ref: WeakRef<object>): Promise<boolean> {
  return until('collected', () => collectedNow(ref)).then(
    () => true,
    () => false,
  );
}

test('ingest: a submission waiting for its commit no longer holds its reports, only the rows made of them', async (t) => {
  const { s, devices, ingest, reached, release } = await setup(t, { hold: true });
  // the first submission's transaction waits in the hook: the second waits behind it
  const first = ingest.submit(devices[0], 'test', [report(1)]);
  await reached();
  let reports: PositionReport[] | undefined = [report(2), report(3)];
  const ref = new WeakRef(reports[0]);
  const second = ingest.submit(devices[1], 'test', reports);
  reports = undefined;
  let settled = false;
  void second.finally(() => (settled = true));
  t.true(await collected(ref), 'the decoded report is garbage while its rows wait for the commit');
  t.false(settled, 'still waiting for its commit');
  release();
  await first;
  t.is((await second).locations.length, 2);
  t.deepEqual(await s.running.db('locations').where('device_id', 'dev-b').orderBy('date_time').pluck('date_time'), [
    Date.UTC(2026, 2, 1, 10, 2),
    Date.UTC(2026, 2, 1, 10, 3),
  ]);
});

test('frame handler: a frame waiting for its commit no longer holds the decoded frame; its replies follow the commit', async (t) => {
  const { s, devices, ingest, reached, release } = await setup(t, { hold: true });
  const first = ingest.submit(devices[0], 'test', [report(1)]);
  await reached();
  const deps = { directory: s.running.services.directory, ingest, logger: s.running.services.logger };
  let decoded: DecodeResult | undefined = { identity: 'dev-b', messages: [report(4)], replies: [Buffer.from([1])] };
  const ref = new WeakRef(decoded.messages[0]);
  const redecode = (): DecodeResult => ({ identity: 'dev-b', messages: [report(4)], replies: [Buffer.from([1])] });
  const outcome = handleDecoded(deps, 'test', decoded, {}, null, redecode);
  decoded = undefined;
  t.true(await collected(ref), 'the decoded report is garbage while the frame waits for the commit');
  release();
  await first;
  const o = await outcome;
  t.is(o.kind, 'ok');
  t.deepEqual(o.kind === 'ok' && o.replies, [Buffer.from([1])], 'the reply, once stored');
  t.deepEqual(await s.running.db('locations').where('device_id', 'dev-b').pluck('date_time'), [
    Date.UTC(2026, 2, 1, 10, 4),
  ]);
});

test('ingest: a full batch is written at once, not at the end of the turn that filled it', async (t) => {
  const { devices, ingest, writes } = await setup(t, { hold: false, maxBatchRows: 2 });
  const full = ingest.submit(devices[0], 'test', [report(1), report(2)]);
  // microtasks only: the turn does not end (setImmediate, where a batch that is not full waits, does not run)
  for (let i = 0; i < 500 && writes() === 0; i++) await null;
  t.is(writes(), 1, 'the full batch reached its transaction within the turn');
  await full;
  const partial = ingest.submit(devices[1], 'test', [report(3)]);
  for (let i = 0; i < 500; i++) await null;
  t.is(writes(), 1, 'a batch that is not full waits for the end of the turn');
  await partial;
  t.is(writes(), 2);
});

test('TCP tracker connection: a frame waiting for its commit no longer holds what was decoded of it; the acknowledgement follows the commit', async (t) => {
  const { s, devices, ingest, reached, release } = await setup(t, { hold: true, imeis: true });
  const { gateway, decodedReports } = await watchedGateway(t, s, ingest);
  // the first device's commit is held: the tracker's frame waits behind it
  const first = ingest.submit(devices[0], 'test', [report(1)]);
  await reached();
  const tracker = await teltonikaSession(t, gateway.ports.teltonika, devices[1].id);
  tracker.socket.write(
    teltonikaAvl([
      { time: new Date(Date.UTC(2026, 2, 1, 10, 5)), lat: 40.05, lon: -3 },
      { time: new Date(Date.UTC(2026, 2, 1, 10, 6)), lat: 40.06, lon: -3 },
    ]),
  );
  await until('the frame decoded', () => decodedReports.length >= 2);
  t.is(decodedReports.length, 2, 'the frame was decoded');
  t.true(await tracker.nothingFor(100), 'no acknowledgement before the commit');
  t.true(
    (await collected(decodedReports[0])) && decodedReports[1].deref() === undefined,
    'what was decoded is garbage while the frame waits for its commit',
  );
  release();
  await first;
  t.deepEqual(await tracker.read(4), Buffer.from([0, 0, 0, 2]), 'two records acknowledged once stored');
  t.deepEqual(
    await s.running.db('locations').where('device_id', devices[1].id).orderBy('date_time').pluck('date_time'),
    [Date.UTC(2026, 2, 1, 10, 5), Date.UTC(2026, 2, 1, 10, 6)],
  );
});

/** A raw-frame feed with one listener, of `accountId`'s frames: what it was offered. */
function feedOf(accountId: string): { tap: FrameTap; offered: LiveFrame[] } {
  const tap = new FrameTap();
  const offered: LiveFrame[] = [];
  tap.attach({ wants: (a) => a === accountId, offer: (_a, _d, frame) => offered.push(frame) });
  return { tap, offered };
}

test('TCP tracker connection with the raw-frame feed attached: a frame nobody listens to no longer holds what was decoded of it while it waits for its commit', async (t) => {
  const { s, devices, ingest, reached, release } = await setup(t, { hold: true, imeis: true });
  // the feed has a listener, of another account's frames (as main.ts and every gateway process always attach one)
  const feed = feedOf('another-account');
  const { gateway, decodedReports } = await watchedGateway(t, s, ingest, feed.tap);
  const first = ingest.submit(devices[0], 'test', [report(1)]);
  await reached();
  const tracker = await teltonikaSession(t, gateway.ports.teltonika, devices[1].id);
  tracker.socket.write(teltonikaAvl([{ time: new Date(Date.UTC(2026, 2, 1, 10, 5)), lat: 40.05, lon: -3 }]));
  await until('the frame decoded', () => decodedReports.length >= 1);
  t.true(await tracker.nothingFor(100), 'no acknowledgement before the commit');
  t.true(await collected(decodedReports[0]), 'what was decoded is garbage while the frame waits for its commit');
  release();
  await first;
  t.deepEqual(await tracker.read(4), Buffer.from([0, 0, 0, 1]), 'acknowledged once stored');
  t.is(feed.offered.length, 0, 'nothing shown to a listener of another account');
});

test("TCP tracker connection with someone listening to its account's frames: the frame is kept for the feed and shown once stored", async (t) => {
  const { s, devices, ingest, reached, release } = await setup(t, { hold: true, imeis: true });
  const feed = feedOf(devices[1].accountId);
  const { gateway, decodedReports } = await watchedGateway(t, s, ingest, feed.tap);
  const first = ingest.submit(devices[0], 'test', [report(1)]);
  await reached();
  const tracker = await teltonikaSession(t, gateway.ports.teltonika, devices[1].id);
  const frame = teltonikaAvl([{ time: new Date(Date.UTC(2026, 2, 1, 10, 5)), lat: 40.05, lon: -3 }]);
  tracker.socket.write(frame);
  await until('the frame decoded', () => decodedReports.length >= 1);
  t.false(await collectedNow(decodedReports[0]), 'kept for the feed while the frame waits for its commit');
  t.is(feed.offered.length, 1, 'the login frame only, so far');
  release();
  await first;
  t.deepEqual(await tracker.read(4), Buffer.from([0, 0, 0, 1]));
  await until('the frame shown', () => feed.offered.length >= 2);
  const shown = feed.offered[1];
  t.is(shown.hex, frame.toString('hex'));
  t.is(shown.outcome, 'ok');
  t.is(shown.decoded?.messageCount, 1);
});

test('MQTT publish: a message waiting for its commit no longer holds its reports; the PUBACK follows the commit', async (t) => {
  const { s, devices, ingest, reached, release } = await setup(t, { hold: true });
  const services = s.running.services;
  const submitted: WeakRef<object>[] = [];
  // the real ingest; the test only keeps a weak reference to the reports it is given
  const watching: Pick<IngestService, 'submit'> = {
    submit: (device, protocol, reports, options) => {
      for (const r of reports) submitted.push(new WeakRef(r));
      return ingest.submit(device, protocol, reports, options);
    },
  };
  const handler = createPublishHandler({
    directory: services.directory,
    ingest: watching,
    logger: services.logger,
    pending: new Semaphore(100),
  });
  const device = devices[1];
  // what aedes hands authorizePublish for a logged-in device (mqtt.sessions.ts makes the session)
  const session: Session = {
    identity: {
      kind: 'device',
      deviceId: device.id,
      accountId: device.accountId,
      passwordHash: device.mqttPasswordHash as string,
    },
    bucket: new PublishBucket(DEFAULT_RATE, systemClock),
    tail: Promise.resolve(),
    remoteAddress: null,
  };
  const client = { id: 'c1', closed: false } as unknown as Client;
  const packet = {
    cmd: 'publish',
    qos: 1,
    dup: false,
    retain: false,
    messageId: 1,
    topic: `devices/${device.id}/locations`,
    payload: Buffer.from('{"dateTime":"2026-03-01T10:07:00Z","latitude":40.07,"longitude":-3}'),
  } as PublishPacket;
  const first = ingest.submit(devices[0], 'test', [report(1)]);
  await reached();
  const acked: (Error | null | undefined)[] = [];
  handler.authorize(client, session, packet, (e) => acked.push(e));
  await until('the message handed to the ingest', () => submitted.length > 0);
  t.is(submitted.length, 1, 'handed to the ingest');
  t.true(await collected(submitted[0]), 'the report is garbage while the message waits for its commit');
  t.deepEqual(acked, [], 'no PUBACK before the commit');
  release();
  await first;
  await until('the PUBACK', () => acked.length > 0);
  t.deepEqual(acked, [null], 'acknowledged once stored');
  t.deepEqual(await s.running.db('locations').where('device_id', device.id).pluck('date_time'), [
    Date.UTC(2026, 2, 1, 10, 7),
  ]);
});

test('UDP datagram: while it waits for its commit, what was decoded of it is garbage; the acknowledgement follows the commit', async (t) => {
  const { s, devices, ingest, reached, release } = await setup(t, { hold: true, imeis: true });
  const { gateway, decodedReports } = await watchedGateway(t, s, ingest);
  const first = ingest.submit(devices[0], 'test', [report(1)]);
  await reached();
  const answer = udpExchange(
    gateway.ports['teltonika/udp'],
    teltonikaDatagram(devices[1].id, 7, [{ time: new Date(Date.UTC(2026, 2, 1, 10, 8)), lat: 40.08, lon: -3 }]),
    10_000,
  );
  await until('the datagram decoded', () => decodedReports.length >= 1);
  t.is(decodedReports.length, 1, 'the datagram was decoded');
  t.true(await collected(decodedReports[0]), 'what was decoded is garbage while the datagram waits for its commit');
  release();
  await first;
  t.truthy(await answer, 'acknowledged once stored');
  t.deepEqual(await s.running.db('locations').where('device_id', devices[1].id).pluck('date_time'), [
    Date.UTC(2026, 2, 1, 10, 8),
  ]);
});
