import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import path from 'node:path';
import { generate } from 'selfsigned';
import { ADMIN_KEY, createDevice, startServer, testEnv, type TestServer } from '../../helpers/server.js';
import { createStorage } from '../../helpers/backends.js';
import { TrackerClient, readTeltonikaCommand, teltonikaSession } from '../../helpers/tracker-client.js';
import { capturingLogger } from '../../helpers/capture-logger.js';
import { PATIENCE_MS, until } from '../../helpers/wait.js';
import * as F from '../../helpers/frames.js';
import { runCli } from '../../helpers/run-cli.js';
import { certificateFiles, makeCertificate, replaceFile } from '../../helpers/certificates.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const IMEI = '356307042441013';
const SECRET = 'edge-gateway-secret-0123456789abcdef';
const T0 = Date.UTC(2026, 2, 1, 9);
const avl = (i: number) => F.teltonikaAvl([{ time: new Date(T0 + i * 1000), lat: 40 + i / 100, lon: -3 }]);
type T = { teardown(fn: () => unknown): void };

async function certificate(t: T): Promise<{ cert: string; key: string; pem: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'trackgate-edge-tls-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  writeFileSync(path.join(dir, 'cert.pem'), pems.cert);
  writeFileSync(path.join(dir, 'key.pem'), pems.private);
  return { cert: path.join(dir, 'cert.pem'), key: path.join(dir, 'key.pem'), pem: pems.cert };
}

/**
 * `trackgate gateway --core … [args]` as a real process; resolves with its tracker ports once it
 * logs "listening", or undefined after `ms`. `lines`: its standard output; `stderr`: its standard
 * error (passed on to the test's).
 */
function spawnEdge(
  t: T,
  core: string,
  env: Record<string, string>,
  ms = PATIENCE_MS,
  args: string[] = [],
): Promise<{ child: ChildProcess; ports?: Record<string, number>; lines: string[]; stderr: string[] }> {
  const child = spawn(process.execPath, ['--import=tsx', 'cli.ts', 'gateway', '--core', core, ...args], {
    cwd: root,
    env: { ...process.env, ...testEnv({ TRACKGATE_LOG_LEVEL: 'info', TRACKGATE_TELTONIKA_PORT: '0', ...env }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => child.kill('SIGKILL'));
  const lines: string[] = [];
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderr.push(line);
    process.stderr.write(`${line}\n`);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve({ child, lines, stderr }), ms);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; ports?: Record<string, number> };
        if (entry.msg === 'listening' && entry.ports) {
          clearTimeout(timer);
          resolve({ child, ports: entry.ports, lines, stderr });
        }
      } catch {
        /* not a log line */
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the edge gateway exited with ${code}`));
    });
  });
}

const stored = async (s: TestServer): Promise<string[]> =>
  (
    await s.request('POST', `/api/devices/${IMEI}/locations`, {
      token: s.adminToken,
      body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    })
  ).body.locations.map((l: { dateTime: string }) => l.dateTime);

test('gateway.edge: an edge gateway over TLS with the shared secret stores through the core, delivers commands, acknowledges nothing while the core is down, refuses new trackers meanwhile, and resumes by itself', async (t) => {
  const tls = await certificate(t);
  const storage = await createStorage('sqlite');
  t.teardown(() => storage.cleanup());
  const coreEnv = {
    TRACKGATE_GATEWAY_LINK_PORT: '0',
    TRACKGATE_GATEWAY_SECRET: SECRET,
    TRACKGATE_GATEWAY_TLS_CERT: tls.cert,
    TRACKGATE_GATEWAY_TLS_KEY: tls.key,
    TRACKGATE_COMMAND_WAIT: '120',
  };
  const s = await startServer('sqlite', { storageEnv: storage.env, env: coreEnv });
  let stopped = false;
  t.teardown(() => (stopped ? undefined : s.running.stop()));
  await createDevice(s, IMEI, { name: 'edge' });
  const linkPort = s.running.ports.gatewayLink;
  t.true(linkPort > 0);

  const edge = await spawnEdge(t, `localhost:${linkPort}`, {
    TRACKGATE_GATEWAY_SECRET: SECRET,
    TRACKGATE_GATEWAY_TLS_CA: tls.cert,
  });
  t.truthy(edge.ports, 'the edge listens once the core answered');
  const port = edge.ports!.teltonika;
  const c = await teltonikaSession(t, port, IMEI);
  c.write(avl(0));
  t.deepEqual(await c.read(4), Buffer.from([0, 0, 0, 1]));
  t.deepEqual(await stored(s), [new Date(T0).toISOString()]);

  await until('the core knows the edge holds the device', () => s.running.edgeLink!.connectedDevices().includes(IMEI));
  const pending = s.request('POST', `/api/devices/${IMEI}/sendCommand`, {
    token: s.adminToken,
    body: { command: 'getver' },
  });
  t.is(await readTeltonikaCommand(c), 'getver');
  c.write(F.teltonikaAnswer('Ver:03.27.07'));
  t.is((await pending).body.result, 'Ver:03.27.07');

  // the core goes away
  await s.running.stop();
  stopped = true;
  c.write(avl(1));
  t.true(await c.nothingFor(1500), 'nothing acknowledged while the core is down');
  t.false(c.closed, 'the tracker keeps its connection');
  const newcomer = await TrackerClient.connect(port);
  t.teardown(() => newcomer.end());
  t.true(await newcomer.waitClosed(), 'a new tracker connection is closed at once while the core is down');

  // the core comes back on the same link port: the edge connects again by itself
  const back = await startServer('sqlite', {
    storageEnv: storage.env,
    env: { ...coreEnv, TRACKGATE_GATEWAY_LINK_PORT: String(linkPort) },
  });
  t.teardown(() => back.running.stop());
  await until('the edge is back', () => back.running.edgeLink!.connections() === 1);
  c.write(avl(1));
  t.deepEqual(await c.read(4), Buffer.from([0, 0, 0, 1]), 'the resend is acknowledged');
  t.deepEqual(
    await stored(back),
    [0, 1].map((i) => new Date(T0 + i * 1000).toISOString()),
  );
});

test("gateway.edge: an edge gateway with --tls to the core's IP address links up without Node's DEP0123 warning (no TLS ServerName for an IP address)", async (t) => {
  const tls = await certificate(t);
  const s = await startServer('sqlite', {
    env: {
      TRACKGATE_GATEWAY_LINK_PORT: '0',
      TRACKGATE_GATEWAY_SECRET: SECRET,
      TRACKGATE_GATEWAY_TLS_CERT: tls.cert,
      TRACKGATE_GATEWAY_TLS_KEY: tls.key,
    },
  });
  t.teardown(() => s.stop());
  await createDevice(s, IMEI, { name: 'edge' });
  // --tls trusts the system's authorities: Node's extra ones hold the core's self-signed certificate (IP SAN 127.0.0.1)
  const edge = await spawnEdge(
    t,
    `127.0.0.1:${s.running.ports.gatewayLink}`,
    { TRACKGATE_GATEWAY_SECRET: SECRET, NODE_EXTRA_CA_CERTS: tls.cert },
    PATIENCE_MS,
    ['--tls'],
  );
  t.truthy(edge.ports, 'the edge links up and listens');
  const c = await teltonikaSession(t, edge.ports!.teltonika, IMEI);
  c.write(avl(0));
  t.deepEqual(await c.read(4), Buffer.from([0, 0, 0, 1]));
  t.deepEqual(await stored(s), [new Date(T0).toISOString()]);
  t.deepEqual(
    edge.stderr.filter((l) => /DEP0123|ServerName/.test(l)),
    [],
    'no DEP0123 warning on standard error',
  );
});

for (const processes of ['0', '1']) {
  test(`gateway.edge: a tracker that moves between the core's own port and an edge gateway has its connection on the side it left closed, and its commands follow it (TRACKGATE_GATEWAY_PROCESSES=${processes})`, async (t) => {
    const s = await startServer('sqlite', {
      env: {
        TRACKGATE_GATEWAY_LINK_PORT: '0',
        TRACKGATE_GATEWAY_SECRET: SECRET,
        TRACKGATE_COMMAND_WAIT: '120',
        TRACKGATE_GATEWAY_PROCESSES: processes,
        TRACKGATE_TELTONIKA_PORT: '0',
      },
    });
    t.teardown(() => s.stop());
    await createDevice(s, IMEI, { name: 'edge' });
    const edge = await spawnEdge(t, `127.0.0.1:${s.running.ports.gatewayLink}`, { TRACKGATE_GATEWAY_SECRET: SECRET });
    const command = async (at: TrackerClient, text: string) => {
      const pending = s.request('POST', `/api/devices/${IMEI}/sendCommand`, {
        token: s.adminToken,
        body: { command: text },
      });
      t.is(await readTeltonikaCommand(at), text);
      at.write(F.teltonikaAnswer(`ok ${text}`));
      t.is((await pending).body.result, `ok ${text}`);
    };

    const atCore = await teltonikaSession(t, s.running.ports.teltonika, IMEI);
    await until('the core holds the device', () => s.running.gateway.connectedDevices().includes(IMEI));
    const atEdge = await teltonikaSession(t, edge.ports!.teltonika, IMEI);
    t.true(await atCore.waitClosed(), "its connection on the core's own port is closed once it connected to the edge");
    await command(atEdge, 'getver');

    const back = await teltonikaSession(t, s.running.ports.teltonika, IMEI);
    t.true(await atEdge.waitClosed(), 'its connection on the edge is closed once it connected to the core again');
    await until('the edge no longer holds it', () => !s.running.edgeLink!.connectedDevices().includes(IMEI));
    await command(back, 'getgps');
  });
}

test('gateway.edge: an edge gateway with the wrong secret is refused and opens no tracker port', async (t) => {
  const logger = capturingLogger();
  const s = await startServer('sqlite', {
    env: { TRACKGATE_GATEWAY_LINK_PORT: '0', TRACKGATE_GATEWAY_SECRET: SECRET },
    logger,
  });
  t.teardown(() => s.stop());
  const edge = spawnEdge(t, `localhost:${s.running.ports.gatewayLink}`, {
    TRACKGATE_GATEWAY_SECRET: 'not-the-secret-of-the-core-0123456789',
  });
  let listening = false;
  void edge.then(
    (e) => (listening = e.ports !== undefined),
    () => undefined,
  );
  // an edge listens right after its link is up: by its third attempt a 'listening' of the first would have been read
  await until(
    'the core refused it three times',
    () => logger.at('warn', /gateway process refused: wrong secret/).length >= 3,
  );
  t.false(listening, 'no tracker port while the core refuses it');
  t.is(s.running.edgeLink!.connections(), 0);
});

test('gateway.edge: trackgate gateway without the secret, or with a --core that is not host:port, stops with one line saying why', async (t) => {
  // without blocking: the other tests of this file run cores in this process meanwhile
  const run = (args: string[], env: Record<string, string>) =>
    runCli(['gateway', ...args], testEnv({ TRACKGATE_TELTONIKA_PORT: '0', ...env }));
  const noSecret = await run(['--core', '127.0.0.1:5100'], {});
  t.is(noSecret.status, 1);
  t.regex(noSecret.stderr, /configuration error: TRACKGATE_GATEWAY_SECRET: an edge gateway presents it to the core/);
  const badCore = await run(['--core', 'core.example.com'], { TRACKGATE_GATEWAY_SECRET: SECRET });
  t.not(badCore.status, 0);
  t.regex(badCore.stderr, /must be host:port/);
  // a CA file that holds no certificate: Node took it, trusted nothing, and every handshake failed without naming it
  const dir = mkdtempSync(path.join(os.tmpdir(), 'trackgate-edge-ca-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'ca.pem'), 'this is not a certificate\n');
  const badCa = await run(['--core', '127.0.0.1:5100'], {
    TRACKGATE_GATEWAY_SECRET: SECRET,
    TRACKGATE_GATEWAY_TLS_CA: path.join(dir, 'ca.pem'),
  });
  t.is(badCa.status, 1);
  t.regex(badCa.stderr, /configuration error: TRACKGATE_GATEWAY_TLS_CA: .*ca\.pem holds no PEM certificate/);
});

test('gateway.edge: a core whose link certificate or key is not one stops at start naming TRACKGATE_GATEWAY_TLS_CERT', async (t) => {
  const tls = await certificate(t);
  const other = await certificate(t);
  for (const [cert, key] of [
    [tls.key, tls.key],
    [tls.cert, other.key],
  ]) {
    const error = await t.throwsAsync(
      startServer('sqlite', {
        env: {
          TRACKGATE_GATEWAY_LINK_PORT: '0',
          TRACKGATE_GATEWAY_SECRET: SECRET,
          TRACKGATE_GATEWAY_TLS_CERT: cert,
          TRACKGATE_GATEWAY_TLS_KEY: key,
        },
      }),
    );
    t.regex(error!.message, /TRACKGATE_GATEWAY_TLS_CERT: .* are not a PEM certificate and its key/);
  }
});

/** The core as a real process (main.ts); resolves once it logs "listening". */
function spawnCore(t: T, env: Record<string, string>): Promise<{ child: ChildProcess; ports: Record<string, number> }> {
  const child = spawn(process.execPath, ['--import=tsx', 'main.ts'], {
    cwd: root,
    env: { ...process.env, ...testEnv({ TRACKGATE_LOG_LEVEL: 'info', ...env }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.teardown(() => child.kill('SIGKILL'));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; ports?: Record<string, number> };
        if (entry.msg === 'listening' && entry.ports) resolve({ child, ports: entry.ports });
      } catch {
        /* not a log line */
      }
    });
    child.once('exit', (code) => reject(new Error(`the core exited with ${code} before listening`)));
  });
}

test('gateway.edge: the core killed (SIGKILL), an edge gateway acknowledges nothing until a new core is up, then the tracker resends and all is stored', async (t) => {
  const storage = await createStorage('sqlite');
  t.teardown(() => storage.cleanup());
  const coreEnv = { ...storage.env, TRACKGATE_GATEWAY_LINK_PORT: '0', TRACKGATE_GATEWAY_SECRET: SECRET };
  const core = await spawnCore(t, coreEnv);
  const base = `http://127.0.0.1:${core.ports.http}`;
  const token = (
    (await (
      await fetch(`${base}/api/Auth/Token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ userName: 'admin', apiKey: ADMIN_KEY }),
      })
    ).json()) as { token: string }
  ).token;
  t.is(
    (
      await fetch(`${base}/api/devices`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ id: IMEI, name: 'edge' }),
      })
    ).status,
    201,
  );

  const linkPort = core.ports.gatewayLink;
  const edge = await spawnEdge(t, `localhost:${linkPort}`, { TRACKGATE_GATEWAY_SECRET: SECRET });
  const c = await teltonikaSession(t, edge.ports!.teltonika, IMEI);
  c.write(avl(0));
  t.deepEqual(await c.read(4), Buffer.from([0, 0, 0, 1]));

  core.child.kill('SIGKILL');
  await once(core.child, 'exit');
  c.write(avl(1));
  t.true(await c.nothingFor(2000), 'nothing acknowledged while there is no core');

  const back = await startServer('sqlite', {
    storageEnv: storage.env,
    env: { TRACKGATE_GATEWAY_LINK_PORT: String(linkPort), TRACKGATE_GATEWAY_SECRET: SECRET },
  });
  t.teardown(() => back.stop());
  await until('the edge gateway connected again by itself', () => back.running.edgeLink!.connections() === 1);
  c.write(avl(1));
  t.deepEqual(await c.read(4), Buffer.from([0, 0, 0, 1]));
  t.deepEqual(
    await stored(back),
    [0, 1].map((i) => new Date(T0 + i * 1000).toISOString()),
  );
});

test('gateway.edge: a core that hangs (SIGSTOP) counts as unreachable: the edge says so, takes no new tracker, acknowledges nothing, and resumes once the core answers again', async (t) => {
  const storage = await createStorage('sqlite');
  t.teardown(() => storage.cleanup());
  const core = await spawnCore(t, {
    ...storage.env,
    TRACKGATE_GATEWAY_LINK_PORT: '0',
    TRACKGATE_GATEWAY_SECRET: SECRET,
  });
  t.teardown(() => core.child.kill('SIGCONT'));
  const base = `http://127.0.0.1:${core.ports.http}`;
  const token = (
    (await (
      await fetch(`${base}/api/Auth/Token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ userName: 'admin', apiKey: ADMIN_KEY }),
      })
    ).json()) as { token: string }
  ).token;
  t.is(
    (
      await fetch(`${base}/api/devices`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ id: IMEI, name: 'edge' }),
      })
    ).status,
    201,
  );
  const edge = await spawnEdge(t, `127.0.0.1:${core.ports.gatewayLink}`, { TRACKGATE_GATEWAY_SECRET: SECRET });
  const c = await teltonikaSession(t, edge.ports!.teltonika, IMEI);
  c.write(avl(0));
  t.deepEqual(await c.read(4), Buffer.from([0, 0, 0, 1]));

  core.child.kill('SIGSTOP');
  c.write(avl(1));
  const hung = () =>
    edge.lines.some((l) => /core link: the core has not answered for \d+ s \(is it stopped or hung\?\)/.test(l));
  // LIVENESS_EVERY_MS + LIVENESS_TIMEOUT_MS, and some slack
  await until('the edge says the core does not answer', hung);
  t.true(await c.nothingFor(0), 'nothing acknowledged while the core is stopped');
  const newcomer = await TrackerClient.connect(edge.ports!.teltonika);
  t.teardown(() => newcomer.end());
  t.true(await newcomer.waitClosed(), 'a new tracker connection is closed at once while the core does not answer');

  core.child.kill('SIGCONT');
  await until('the link is up again', () => edge.lines.filter((l) => l.includes('"msg":"core link up"')).length >= 2);
  c.write(avl(1));
  t.deepEqual(await c.read(4), Buffer.from([0, 0, 0, 1]), 'the resend is acknowledged');
  const times = (await (
    await fetch(`${base}/api/devices/${IMEI}/locations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' }),
    })
  ).json()) as { locations: { dateTime: string }[] };
  t.deepEqual(
    times.locations.map((l) => l.dateTime),
    [0, 1].map((i) => new Date(T0 + i * 1000).toISOString()),
  );
});

test('gateway.edge: an edge gateway serves a TLS tracker port with its own certificate, stores through the core, and takes a renewal without a restart', async (t) => {
  const s = await startServer('sqlite', {
    env: { TRACKGATE_GATEWAY_LINK_PORT: '0', TRACKGATE_GATEWAY_SECRET: SECRET },
  });
  t.teardown(() => s.stop());
  await createDevice(s, IMEI, { name: 'edge' });
  const [a, b] = await Promise.all([makeCertificate('edge-a'), makeCertificate('edge-b')]);
  const files = certificateFiles(t, a);
  const edge = await spawnEdge(t, `127.0.0.1:${s.running.ports.gatewayLink}`, {
    TRACKGATE_GATEWAY_SECRET: SECRET,
    TRACKGATE_TLS_CERT: files.certFile,
    TRACKGATE_TLS_KEY: files.keyFile,
    TRACKGATE_HTTPS_PORT: 'off',
    TRACKGATE_TELTONIKA_TLS_PORT: '0',
    TRACKGATE_TLS_CHECK_INTERVAL: '1',
  });
  const port = edge.ports!['teltonika/tls'];
  t.true(port > 0, 'the listening line names the TLS port');
  const tracker = await TrackerClient.connectTls(port, a.cert);
  t.teardown(() => tracker.end());
  tracker.write(F.teltonikaLogin(IMEI));
  t.deepEqual(await tracker.read(1), Buffer.from([1]));
  tracker.write(avl(0));
  t.deepEqual(await tracker.read(4), Buffer.from([0, 0, 0, 1]), 'acknowledged once the core stored it');
  t.deepEqual(await stored(s), [new Date(T0).toISOString()]);

  replaceFile(files.certFile, b.cert);
  replaceFile(files.keyFile, b.key);
  await until('a new connection gets the renewed certificate', async () => {
    const c = await TrackerClient.connectTls(port, `${a.cert}\n${b.cert}`);
    const fingerprint = c.peerFingerprint();
    c.end();
    return fingerprint === b.fingerprint256;
  });
  tracker.write(avl(1));
  t.deepEqual(await tracker.read(4), Buffer.from([0, 0, 0, 1]), 'the tracker connected before goes on');
});
