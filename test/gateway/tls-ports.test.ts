import test from 'ava';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { bindProblem, ConfigError, loadConfig } from '../../config/config.js';
import { startTrackgate } from '../../main.js';
import { silentLogger } from '../../core/logger.js';
import { capturingLogger } from '../helpers/capture-logger.js';
import { certificateFiles, makeCertificate, replaceFile, type TestCertificate } from '../helpers/certificates.js';
import * as F from '../helpers/frames.js';
import { createStorage } from '../helpers/backends.js';
import {
  createDevice,
  startTestServer,
  testEnv,
  GATEWAY_MODES,
  type GatewayMode,
  type TestServer,
} from '../helpers/server.js';
import { TrackerClient } from '../helpers/tracker-client.js';
import { until } from '../helpers/wait.js';

// Serial: the gateway-process mode makes this test process a cluster primary (test/gateway/ipc/gateway-processes.test.ts).
const TELTONIKA = '356307042441013';
const GT06 = '868120145233604';
const T0 = Date.UTC(2026, 2, 1, 10);

let certA: TestCertificate;
let certB: TestCertificate;
test.before(async () => {
  [certA, certB] = await Promise.all([makeCertificate('trackgate-a'), makeCertificate('trackgate-b')]);
});

function tlsEnv(
  files: { certFile: string; keyFile: string },
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    TRACKGATE_TLS_CERT: files.certFile,
    TRACKGATE_TLS_KEY: files.keyFile,
    TRACKGATE_HTTPS_PORT: 'off',
    TRACKGATE_TELTONIKA_PORT: '0',
    TRACKGATE_TELTONIKA_TLS_PORT: '0',
    TRACKGATE_GT06_TLS_PORT: '0',
    TRACKGATE_TLS_CHECK_INTERVAL: '1',
    ...extra,
  };
}

async function start(
  t: Parameters<typeof startTestServer>[0],
  mode: GatewayMode,
  env: Record<string, string>,
  logger = silentLogger,
) {
  const s = await startTestServer(t, { env: { ...env, ...mode.env }, logger });
  for (const id of [TELTONIKA, GT06]) await createDevice(s, id);
  return s;
}

const locations = async (s: TestServer, id: string): Promise<{ dateTime: string; latitude: number }[]> =>
  (
    await s.request('POST', `/api/devices/${id}/locations`, {
      token: s.adminToken,
      body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    })
  ).body.locations;

async function teltonikaOverTls(
  t: { teardown(fn: () => unknown): void },
  port: number,
  ca: string,
): Promise<TrackerClient> {
  const c = await TrackerClient.connectTls(port, ca);
  t.teardown(() => c.end());
  c.write(F.teltonikaLogin(TELTONIKA));
  const reply = await c.read(1);
  if (reply[0] !== 1) throw new Error(`login refused: ${reply.toString('hex')}`);
  return c;
}

for (const mode of GATEWAY_MODES)
  test.serial(
    `tls ports: a Teltonika and a GT06 tracker over TLS are stored and acknowledged after the commit [${mode.name}]`,
    async (t) => {
      const files = certificateFiles(t, certA);
      const s = await start(t, mode, tlsEnv(files));
      const ports = s.running.ports;
      t.true(ports['teltonika/tls'] > 0 && ports['gt06/tls'] > 0, 'the listening ports name the TLS ports');
      t.is(ports['gt06/tls'] === ports['teltonika/tls'], false);
      t.true(ports.teltonika > 0, 'the plain port stays');
      t.false('gt06' in ports, 'GT06 has only its TLS port');

      const tel = await teltonikaOverTls(t, ports['teltonika/tls'], certA.cert);
      t.is(tel.peerFingerprint(), certA.fingerprint256);
      tel.write(F.teltonikaAvl([0, 1].map((i) => ({ time: new Date(T0 + i * 1000), lat: 40 + i / 100, lon: -3 }))));
      t.deepEqual(await tel.read(4), Buffer.from([0, 0, 0, 2]), 'Teltonika: the count of records, once stored');
      t.deepEqual(
        (await locations(s, TELTONIKA)).map((l) => l.dateTime),
        [0, 1].map((i) => new Date(T0 + i * 1000).toISOString()),
        'acknowledged means committed: readable at once',
      );

      const gt = await TrackerClient.connectTls(ports['gt06/tls'], certA.cert);
      t.teardown(() => gt.end());
      gt.write(F.gt06Login(GT06, 1));
      t.deepEqual(await gt.read(10), F.gt06Ack(0x01, 1));
      gt.write(F.gt06Position({ time: new Date(T0), lat: 41.5, lon: 2.1 }, 2));
      t.deepEqual(await gt.read(10), F.gt06Ack(0x22, 2));
      const g = await locations(s, GT06);
      t.is(g.length, 1);
      t.is(g[0].latitude, 41.5);
    },
  );

for (const mode of GATEWAY_MODES)
  test.serial(
    `tls ports: a certificate replaced on disk serves new connections while a connected tracker goes on; a bad pair is refused and the old one kept [${mode.name}]`,
    async (t) => {
      const files = certificateFiles(t, certA);
      const logger = capturingLogger();
      const s = await start(t, mode, tlsEnv(files), logger);
      const port = s.running.ports['teltonika/tls'];
      const old = await teltonikaOverTls(t, port, certA.cert);

      replaceFile(files.keyFile, certB.key);
      replaceFile(files.certFile, certB.cert);
      // a renewal is taken within two checks; each gateway process gets it from the core
      await until('a new connection gets the renewed certificate', async () => {
        const c = await TrackerClient.connectTls(port, `${certA.cert}\n${certB.cert}`);
        const fingerprint = c.peerFingerprint();
        c.end();
        return fingerprint === certB.fingerprint256;
      });
      t.is(logger.at('info', 'TLS certificate renewed: new connections get it').length, 1);

      // the tracker connected before goes on over its session
      old.write(F.teltonikaAvl([{ time: new Date(T0), lat: 40, lon: -3 }]));
      t.deepEqual(await old.read(4), Buffer.from([0, 0, 0, 1]));
      t.is(old.peerFingerprint(), certA.fingerprint256);
      const fresh = await teltonikaOverTls(t, port, certB.cert);
      fresh.write(F.teltonikaAvl([{ time: new Date(T0 + 1000), lat: 40.1, lon: -3 }]));
      t.deepEqual(await fresh.read(4), Buffer.from([0, 0, 0, 1]));

      // a key of another certificate: logged at error, the renewed pair stays in use
      replaceFile(files.keyFile, certA.key);
      await until(
        'the mismatched pair is logged',
        () => logger.at('error', /TLS certificate not renewed/).length === 1,
      );
      // a file that cannot be read
      writeFileSync(files.certFile, 'not a certificate');
      await until(
        'the unreadable certificate is logged',
        () => logger.at('error', /TLS certificate not renewed/).length === 2,
      );
      const after = await teltonikaOverTls(t, port, certB.cert);
      t.is(after.peerFingerprint(), certB.fingerprint256, 'the last good pair is still served');
      after.write(F.teltonikaAvl([{ time: new Date(T0 + 2000), lat: 40.2, lon: -3 }]));
      t.deepEqual(await after.read(4), Buffer.from([0, 0, 0, 1]));
      t.is((await locations(s, TELTONIKA)).length, 3);
    },
  );

test.serial(
  'tls ports: a plain connection to a TLS port and a TLS handshake to a plain port are refused and logged once per address; the process lives on',
  async (t) => {
    const files = certificateFiles(t, certA);
    const logger = capturingLogger();
    const s = await start(t, { name: 'in the core', env: { TRACKGATE_GATEWAY_PROCESSES: '0' } }, tlsEnv(files), logger);
    const { teltonika: plainPort, 'teltonika/tls': tlsPort } = s.running.ports;
    const refused = () => logger.at('warn', /^connection refused: TLS and plain do not mix/);

    for (let i = 0; i < 2; i++) {
      const plain = await TrackerClient.connect(tlsPort);
      plain.write(F.teltonikaLogin(TELTONIKA));
      t.true(await plain.waitClosed(), 'a plain tracker on the TLS port is closed');
    }
    await until('the refusal is logged', () => refused().length >= 1);
    t.is(refused().length, 1, 'logged once for the address');
    t.is(refused()[0].remoteAddress, '127.0.0.1');
    t.regex(String(refused()[0].reason), /not a TLS handshake/);

    for (let i = 0; i < 2; i++) {
      const closed = await new Promise<string>((resolve) => {
        const c = tls.connect({ port: plainPort, host: '127.0.0.1', ca: certA.cert, servername: 'localhost' });
        c.once('secureConnect', () => resolve('handshake completed'));
        c.once('error', (e) => resolve(e.message));
        c.once('close', () => resolve('closed'));
      });
      t.not(closed, 'handshake completed', 'no TLS on the plain port');
    }
    // the address was logged already within the hour: the second kind is not logged again for it
    t.is(refused().length, 1);
    await until(
      'both close',
      () =>
        logger.at('info', 'tracker disconnected').filter((e) => e.reason === 'TLS handshake on a plain port').length ===
        2,
    );
    const closing = logger
      .at('info', 'tracker disconnected')
      .filter((e) => e.reason === 'TLS handshake on a plain port');
    t.is(closing.length, 2, 'each connection closes for that reason');

    // both ports still serve trackers
    const tel = await teltonikaOverTls(t, tlsPort, certA.cert);
    tel.write(F.teltonikaAvl([{ time: new Date(T0), lat: 40, lon: -3 }]));
    t.deepEqual(await tel.read(4), Buffer.from([0, 0, 0, 1]));
    const plain = await TrackerClient.connect(plainPort);
    t.teardown(() => plain.end());
    plain.write(F.teltonikaLogin(TELTONIKA));
    t.deepEqual(await plain.read(1), Buffer.from([1]));
  },
);

test.serial('tls ports: a TLS handshake to a plain port is logged with its reason for a new address', async (t) => {
  const files = certificateFiles(t, certA);
  const logger = capturingLogger();
  const s = await start(t, { name: 'in the core', env: { TRACKGATE_GATEWAY_PROCESSES: '0' } }, tlsEnv(files), logger);
  const c = net.connect({ port: s.running.ports.teltonika, host: '127.0.0.1' });
  t.teardown(() => c.destroy());
  const hello = tls.connect({ socket: c, ca: certA.cert, servername: 'localhost' });
  hello.on('error', () => {});
  await until('the refusal is logged', () => logger.at('warn', /^connection refused/).length === 1);
  t.regex(
    String(logger.at('warn', /^connection refused/)[0].reason),
    /TLS handshake on a plain port.*TRACKGATE_TELTONIKA_TLS_PORT/,
  );
});

test('tls ports: wrong files and missing certificates are configuration errors at start', async (t) => {
  const files = certificateFiles(t, certA);
  const storage = await createStorage('sqlite');
  t.teardown(() => storage.cleanup());
  const startWith = async (env: Record<string, string>) =>
    startTrackgate(loadConfig(testEnv({ ...storage.env, ...env })), { logger: silentLogger });

  const missing = await t.throwsAsync(startWith(tlsEnv({ certFile: `${files.dir}/none.pem`, keyFile: files.keyFile })));
  t.true(missing instanceof ConfigError);
  t.regex(missing!.message, /^TRACKGATE_TLS_CERT: cannot read .*none\.pem/);

  const other = certificateFiles(t, certB);
  const mismatched = await t.throwsAsync(startWith(tlsEnv({ certFile: files.certFile, keyFile: other.keyFile })));
  t.regex(mismatched!.message, /^TRACKGATE_TLS_CERT: .* are not a PEM certificate and its key/);

  t.throws(() => loadConfig(testEnv({ TRACKGATE_GT06_TLS_PORT: '0' })), {
    message: /^TRACKGATE_GT06_TLS_PORT: a TLS tracker port needs a certificate/,
  });
  t.throws(() => loadConfig(testEnv({ TRACKGATE_TLS_CERT: files.certFile })), { message: /^TRACKGATE_TLS_KEY: / });
  t.false('osmand' in loadConfig(testEnv()).protocolTlsPorts, 'HTTP protocols have none');
  const inUse = Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE', port: 5999 });
  const config = loadConfig(testEnv(tlsEnv(files, { TRACKGATE_TELTONIKA_TLS_PORT: '5999' })));
  t.regex(
    bindProblem(inUse, config) ?? '',
    /^TRACKGATE_TELTONIKA_TLS_PORT: port 5999 on 127\.0\.0\.1 is already in use/,
  );
});

/** The fingerprint of the certificate a TLS port presents to a new connection. */
function servedFingerprint(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = tls.connect({ port, host: '127.0.0.1', ca, servername: 'localhost' }, () => {
      resolve(c.getPeerCertificate().fingerprint256);
      c.destroy();
    });
    c.once('error', reject);
  });
}

test.serial('tls ports: MQTT over TLS serves the box certificate when its own is unset, and its renewal', async (t) => {
  const files = certificateFiles(t, certA);
  const s = await startTestServer(t, { env: tlsEnv(files, { TRACKGATE_MQTT_TLS_PORT: '0' }) });
  const port = s.running.ports['mqtt/tls'];
  t.true(port > 0);
  t.is(await servedFingerprint(port, certA.cert), certA.fingerprint256);
  replaceFile(files.certFile, certB.cert);
  replaceFile(files.keyFile, certB.key);
  await until(
    'MQTT over TLS serves the renewed certificate',
    async () => (await servedFingerprint(port, `${certA.cert}\n${certB.cert}`)) === certB.fingerprint256,
  );
  t.pass();
});

test.serial("tls ports: MQTT over TLS with its own pair takes that pair's renewal", async (t) => {
  const box = certificateFiles(t, certA);
  const own = certificateFiles(t, certB);
  const s = await startTestServer(t, {
    env: tlsEnv(box, {
      TRACKGATE_MQTT_TLS_PORT: '0',
      TRACKGATE_MQTT_TLS_CERT: own.certFile,
      TRACKGATE_MQTT_TLS_KEY: own.keyFile,
    }),
  });
  const port = s.running.ports['mqtt/tls'];
  t.is(await servedFingerprint(port, certB.cert), certB.fingerprint256, 'its own pair, not the box one');
  replaceFile(own.certFile, certA.cert);
  replaceFile(own.keyFile, certA.key);
  await until(
    'MQTT over TLS serves its renewed pair',
    async () => (await servedFingerprint(port, `${certA.cert}\n${certB.cert}`)) === certA.fingerprint256,
  );
  t.pass();
});
