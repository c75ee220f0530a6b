/**
 * What a gateway process keeps while its submissions wait for the core's commit: thousands of
 * frames wait for each one, and whatever they keep alive survives young-generation collections
 * and is promoted, which under load made the gateway processes' old generation collect over and
 * over (BENCHMARKS.md). The core here is a bare net-ipc server that takes every batch and
 * never answers, so nothing it holds is counted.
 */
import test from 'ava';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Server } from 'net-ipc';
import { silentLogger } from '../../../core/logger.js';
import { systemClock } from '../../../core/clock.js';
import type { DeviceRecord } from '../../../core/model/device.js';
import type { Report } from '../../../core/model/report.js';
import { connectCoreLink } from '../../../gateway/ipc/core-link.client.js';
import type { GatewayBatch } from '../../../gateway/ipc/ipc.messages.js';
import { until } from '../../helpers/wait.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const SUBMISSIONS = 100;
const REPORTS = 10;
/** attributes of about 15,000 characters of JSON per report: 15 MB in all */
const attributes = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`note${i}`, String(i).repeat(1500)]));

test("gateway.ipc link: a submission waiting for the core's answer keeps nothing of its rows (their JSON) once they are sent", async (t) => {
  const socketPath = path.join(os.tmpdir(), `trackgate-test-${process.pid}-${Date.now()}-m.sock`);
  const core = new Server({ path: socketPath });
  let items = 0;
  core.on('request', (_m: unknown, respond: (a: unknown) => Promise<void>) => void respond({ ok: true }));
  core.on('message', (m: GatewayBatch) => {
    if (m?.t === 'batch') items += m.items.length;
  });
  await core.start();
  t.teardown(() => core.close());
  const client = connectCoreLink({
    path: socketPath,
    secret: 'any',
    clock: systemClock,
    logger: silentLogger,
    hello: () => ({ ports: null, online: [] }),
    onDeliver: () => undefined,
    onDrop: () => undefined,
  });
  t.teardown(() => client.close());
  await client.ready();

  const device = { id: '356307042441041', accountId: 'a', model: null } as unknown as DeviceRecord;
  const now = Date.now();
  const reports = (k: number): Report[] =>
    Array.from({ length: REPORTS }, (_, i) => ({
      fixTime: new Date(now - (k * REPORTS + i + 1) * 1000),
      location: { latitudeDeg: 52.1, longitudeDeg: 4.3, valid: true },
      alarms: [],
      attributes: { ...attributes },
    }));
  gc();
  const before = process.memoryUsage().heapUsed;
  const waiting: Promise<unknown>[] = [];
  for (let k = 0; k < SUBMISSIONS; k++)
    waiting.push(client.ingest.submit(device, 'teltonika', reports(k)).catch(() => undefined));
  await until('every submission reached the core', () => items >= SUBMISSIONS);
  gc();
  const held = process.memoryUsage().heapUsed - before;
  const sent = SUBMISSIONS * REPORTS * JSON.stringify(attributes).length;
  t.log(`${(held / 1e6).toFixed(1)} MB held of ${(sent / 1e6).toFixed(1)} MB sent`);
  t.true(
    held < sent / 5,
    `${(held / 1e6).toFixed(1)} MB held while ${SUBMISSIONS} submissions wait, of ${(sent / 1e6).toFixed(1)} MB of JSON sent`,
  );
  t.is(waiting.length, SUBMISSIONS);
});
