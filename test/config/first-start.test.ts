import test from 'ava';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../config/config.js';
import { startTrackgate } from '../../main.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { testEnv } from '../helpers/server.js';

function capturingLogger(lines: { msg?: string; obj: Record<string, unknown> }[]): Logger {
  const log = (obj: object | string, msg?: string) =>
    lines.push(typeof obj === 'string' ? { msg: obj, obj: {} } : { msg, obj: obj as Record<string, unknown> });
  const logger: Logger = { info: log, warn: log, error: log, debug() {}, child: () => logger };
  return logger;
}

/** A port something else holds for the length of the test. */
async function occupiedPort(t: { teardown(fn: () => void): void }): Promise<number> {
  const taken = net.createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  t.teardown(() => taken.close());
  return (taken.address() as net.AddressInfo).port;
}

test('first start: a listener that cannot bind stops the start before the one-time API key is made, and the next start shows it', async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tg-first-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const busyPort = await occupiedPort(t);
  const env = testEnv({ TRACKGATE_DATA_DIR: dataDir });
  delete env.TRACKGATE_ADMIN_API_KEY;

  const lines: { msg?: string; obj: Record<string, unknown> }[] = [];
  await t.throwsAsync(
    startTrackgate(loadConfig({ ...env, TRACKGATE_MQTT_PORT: String(busyPort) }), { logger: capturingLogger(lines) }),
    { code: 'EADDRINUSE' },
  );
  t.false(
    lines.some((l) => 'apiKey' in l.obj),
    'no key was printed by the start that failed',
  );

  const second = await startTrackgate(loadConfig({ ...env, TRACKGATE_MQTT_PORT: '0' }), {
    logger: capturingLogger(lines),
  });
  t.teardown(() => second.stop());
  t.truthy(second.bootstrap, 'the account is created by the start that succeeds');
  t.true(second.bootstrap!.generated);
  const shown = lines.find((l) => typeof l.obj.apiKey === 'string');
  t.is(shown?.obj.apiKey, second.bootstrap!.apiKey, 'the generated key is shown once, by the start that keeps running');
});

test('first start: a start that fails half-way releases the data directory and the ports it had bound', async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tg-first-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const busyPort = await occupiedPort(t);
  const free = net.createServer();
  await new Promise<void>((r) => free.listen(0, '127.0.0.1', r));
  const httpPort = (free.address() as net.AddressInfo).port;
  await new Promise<void>((r) => free.close(() => r()));
  const env = testEnv({ TRACKGATE_DATA_DIR: dataDir, TRACKGATE_HTTP_PORT: String(httpPort) });
  await t.throwsAsync(
    startTrackgate(loadConfig({ ...env, TRACKGATE_MQTT_PORT: String(busyPort) }), { logger: silentLogger }),
  );
  // the same data directory and HTTP port are free again
  const again = await startTrackgate(loadConfig({ ...env, TRACKGATE_MQTT_PORT: '0' }), { logger: silentLogger });
  t.teardown(() => again.stop());
  t.is(again.ports.http, httpPort);
});
