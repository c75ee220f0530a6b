/**
 * A gateway process's end of the link in a worker thread (test/gateway/ipc/link-transport.test.ts):
 * on 'go' it submits one device's reports, enough for a batch of about 1 MB, and right after the
 * batch leaves, its event loop is busy (blocked on a shared flag) for up to `busyMs`: it then says
 * whether the core let it go ('ok', the batch was stored meanwhile) or nobody did ('timed-out').
 * With `submissions`, it makes that many submissions of one report each instead, as a turn that
 * read that many trackers' frames does, and is busy in that same turn, before its end would send
 * anything.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { connectCoreLink } from '../../gateway/ipc/core-link.client.js';
import { systemClock } from '../../core/clock.js';
import { silentLogger } from '../../core/logger.js';
import type { DeviceRecord } from '../../core/model/device.js';
import type { Report } from '../../core/model/report.js';

interface Data {
  address: { host?: string; port?: number; path?: string };
  secret: string;
  device: DeviceRecord;
  reports: number;
  busyMs: number;
  flag: SharedArrayBuffer;
  submissions?: number;
}

const { address, secret, device, reports: count, busyMs, flag, submissions } = workerData as Data;
const port = parentPort!;
const client = connectCoreLink({
  ...address,
  secret,
  clock: systemClock,
  logger: silentLogger,
  hello: () => ({ ports: null, online: [] }),
  onDeliver: () => undefined,
  onDrop: () => undefined,
});
await client.ready();

const now = Date.now();
const reports: Report[] = Array.from({ length: count }, (_, i) => ({
  fixTime: new Date(now - (i + 1) * 1000),
  location: {
    latitudeDeg: 52.1 + i / 1e5,
    longitudeDeg: 4.3 + i / 1e5,
    valid: true,
    speedKmh: 42.5,
    courseDeg: 181,
    altitudeM: 12,
    satellites: 9,
  },
  alarms: [],
  attributes: {
    io239: 1,
    io240: 1,
    io21: 5,
    io69: 1,
    io181: 9,
    io182: 7,
    io66: 12_612,
    io24: 42,
    io80: 0,
    io67: 4_012,
    io9: 1_240,
    power: 12.61,
    battery: 4.012,
    odometer: 123_456_789,
    ignition: true,
    motion: true,
  },
}));

port.once('message', () => {
  if (submissions) {
    const all: Promise<unknown>[] = [];
    for (let i = 0; i < submissions; i++)
      all.push(client.ingest.submit(device, 'teltonika', [reports[i]]).catch(() => undefined));
    port.postMessage(Atomics.wait(new Int32Array(flag), 0, 0, busyMs));
    // the rest leaves at the end of this turn; the link closes once all are answered
    void Promise.all(all).then(() => client.close());
    return;
  }
  void client.ingest.submit(device, 'teltonika', reports).catch(() => undefined);
  // the batch leaves in this turn's check phase (core-link.client.ts flush); this runs right after it
  setImmediate(() => {
    const waited = Atomics.wait(new Int32Array(flag), 0, 0, busyMs);
    port.postMessage(waited);
    void client.close();
  });
});
port.postMessage('ready');
