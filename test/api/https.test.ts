import test from 'ava';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { loadConfig } from '../../config/config.js';
import { startTrackgate } from '../../main.js';
import { silentLogger } from '../../core/logger.js';
import { createStorage } from '../helpers/backends.js';
import { capturingLogger } from '../helpers/capture-logger.js';
import { certificateFiles, makeCertificate, replaceFile, type TestCertificate } from '../helpers/certificates.js';
import * as F from '../helpers/frames.js';
import { ADMIN_KEY, createDevice, startTestServer, testEnv } from '../helpers/server.js';
import { TrackerClient } from '../helpers/tracker-client.js';
import { until } from '../helpers/wait.js';

const TELTONIKA = '356307042441013';

let certA: TestCertificate;
let certB: TestCertificate;
test.before(async () => {
  [certA, certB] = await Promise.all([makeCertificate('trackgate-a'), makeCertificate('trackgate-b')]);
});

interface HttpsReply {
  status: number;
  body: any;
  fingerprint256?: string;
  headers: Record<string, unknown>;
}

/** One HTTPS request on a connection of its own (no keep-alive: each sees the certificate served now). */
function httpsRequest(
  port: number,
  ca: string,
  method: string,
  path: string,
  o: { body?: unknown; token?: string } = {},
): Promise<HttpsReply> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        ca,
        servername: 'localhost',
        agent: false,
        headers: {
          ...(o.body !== undefined && { 'content-type': 'application/json' }),
          ...(o.token && { authorization: `Bearer ${o.token}` }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        const fingerprint256 = (res.socket as tls.TLSSocket).getPeerCertificate().fingerprint256;
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            /* kept as text */
          }
          resolve({ status: res.statusCode!, body, fingerprint256, headers: res.headers });
        });
      },
    );
    req.on('error', reject);
    req.end(o.body === undefined ? undefined : JSON.stringify(o.body));
  });
}

function tlsEnv(files: { certFile: string; keyFile: string }, extra: Record<string, string> = {}) {
  return {
    TRACKGATE_TLS_CERT: files.certFile,
    TRACKGATE_TLS_KEY: files.keyFile,
    TRACKGATE_HTTPS_PORT: '0',
    TRACKGATE_TLS_CHECK_INTERVAL: '1',
    ...extra,
  };
}

test('https: a token and a last location over HTTPS, with a tracker over TLS; plain HTTP stays; the listening line names both', async (t) => {
  const files = certificateFiles(t, certA);
  const logger = capturingLogger();
  const s = await startTestServer(t, { env: tlsEnv(files, { TRACKGATE_TELTONIKA_TLS_PORT: '0' }), logger });
  const { https: port, http: plainPort } = s.running.ports;
  t.true(port > 0 && plainPort > 0);
  const listening = logger.at('info', 'listening')[0].ports as Record<string, number>;
  t.is(listening.https, port);
  t.is(listening['teltonika/tls'], s.running.ports['teltonika/tls']);

  const token = await httpsRequest(port, certA.cert, 'POST', '/api/Auth/Token', {
    body: { userName: 'admin', apiKey: ADMIN_KEY },
  });
  t.is(token.status, 200);
  t.is(token.fingerprint256, certA.fingerprint256);
  const bearer = token.body.token as string;
  await createDevice(s, TELTONIKA);
  const tel = await TrackerClient.connectTls(s.running.ports['teltonika/tls'], certA.cert);
  t.teardown(() => tel.end());
  tel.write(F.teltonikaLogin(TELTONIKA));
  t.deepEqual(await tel.read(1), Buffer.from([1]));
  tel.write(F.teltonikaAvl([{ time: new Date(Date.UTC(2026, 2, 1, 10)), lat: 40.5, lon: -3.25 }]));
  t.deepEqual(await tel.read(4), Buffer.from([0, 0, 0, 1]));

  const last = await httpsRequest(port, certA.cert, 'GET', '/api/lastLocations', { token: bearer });
  t.is(last.status, 200);
  t.is(last.body.lastLocations[0].lastLocation.latitude, 40.5);
  t.is((await s.request('GET', '/api/health')).status, 200, 'plain HTTP still answers');
});

test('https: TRACKGATE_HTTP_PORT=off serves the API over HTTPS only; both off is a configuration error', async (t) => {
  const files = certificateFiles(t, certA);
  const storage = await createStorage('sqlite');
  t.teardown(() => storage.cleanup());
  const config = loadConfig(testEnv({ ...storage.env, ...tlsEnv(files), TRACKGATE_HTTP_PORT: 'off' }));
  const running = await startTrackgate(config, { logger: silentLogger });
  t.teardown(() => running.stop());
  t.false('http' in running.ports);
  t.is((await httpsRequest(running.ports.https, certA.cert, 'GET', '/api/health')).status, 200);
  t.throws(() => loadConfig(testEnv({ ...tlsEnv(files), TRACKGATE_HTTP_PORT: 'off', TRACKGATE_HTTPS_PORT: 'off' })), {
    message: /^TRACKGATE_HTTP_PORT: off needs HTTPS on/,
  });
  t.throws(() => loadConfig(testEnv({ TRACKGATE_HTTPS_PORT: '0' })), {
    message: /^TRACKGATE_HTTPS_PORT: HTTPS needs a certificate/,
  });
  t.is(
    loadConfig(testEnv(tlsEnv(files, { TRACKGATE_HTTPS_PORT: '' }))).httpsPort,
    8443,
    'the default with a certificate',
  );
  t.is(loadConfig(testEnv()).httpsPort, 'off', 'and without one');
});

test('https: a renewed certificate serves the next connections; a pair that does not match is logged and the old one kept', async (t) => {
  const files = certificateFiles(t, certA);
  const logger = capturingLogger();
  const s = await startTestServer(t, { env: tlsEnv(files), logger });
  const port = s.running.ports.https;
  replaceFile(files.certFile, certB.cert);
  replaceFile(files.keyFile, certB.key);
  await until(
    'HTTPS serves the renewed certificate',
    async () =>
      (await httpsRequest(port, `${certA.cert}\n${certB.cert}`, 'GET', '/api/health')).fingerprint256 ===
      certB.fingerprint256,
  );
  replaceFile(files.certFile, certA.cert);
  await until('the mismatched pair is logged', () => logger.at('error', /TLS certificate not renewed/).length === 1);
  const after = await httpsRequest(port, certB.cert, 'GET', '/api/health');
  t.is(after.fingerprint256, certB.fingerprint256);
  t.is(after.status, 200);
});

test('https: plain HTTP to the HTTPS port and a TLS handshake to the HTTP port are refused, logged once per address, and both ports go on', async (t) => {
  const files = certificateFiles(t, certA);
  const logger = capturingLogger();
  const s = await startTestServer(t, { env: tlsEnv(files), logger });
  const refused = () => logger.at('warn', /^connection refused: TLS and plain do not mix/);
  for (let i = 0; i < 2; i++) {
    const answer = await fetch(`http://127.0.0.1:${s.running.ports.https}/api/health`).then(
      (r) => `answered ${r.status}`,
      (e: Error) => e.message,
    );
    t.notRegex(answer, /^answered/, 'no plain answer on the HTTPS port');
  }
  await until('the refusal is logged', () => refused().length === 1);
  t.regex(String(refused()[0].reason), /plain HTTP request to a TLS port/);

  // the same address, the other way round: not logged again within the hour
  const viaTls = await httpsRequest(s.running.ports.http, certA.cert, 'GET', '/api/health').then(
    (r) => `answered ${r.status}`,
    (e: Error) => e.message,
  );
  t.notRegex(viaTls, /^answered/);
  t.is(refused().length, 1);

  t.is((await s.request('GET', '/api/health')).status, 200);
  t.is((await httpsRequest(s.running.ports.https, certA.cert, 'GET', '/api/health')).status, 200);
});

test('https: a TLS handshake to the plain HTTP port names TRACKGATE_HTTPS_PORT', async (t) => {
  const files = certificateFiles(t, certA);
  const logger = capturingLogger();
  const s = await startTestServer(t, { env: tlsEnv(files), logger });
  const c = net.connect({ port: s.running.ports.http, host: '127.0.0.1' });
  t.teardown(() => c.destroy());
  tls.connect({ socket: c, ca: certA.cert, servername: 'localhost' }).on('error', () => {});
  await until('the refusal is logged', () => logger.at('warn', /^connection refused/).length === 1);
  t.regex(String(logger.at('warn', /^connection refused/)[0].reason), /TRACKGATE_HTTPS_PORT/);
});

test('https: X-Forwarded-For names the client for the failed-login limit only when the request comes from a trusted proxy', async (t) => {
  const failTwice = async (s: Awaited<ReturnType<typeof startTestServer>>, client: string) => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await s.request('POST', '/api/Auth/Token', {
        body: { userName: 'admin', apiKey: 'wrong-key-0123456789' },
        headers: { 'x-forwarded-for': `${client}, 127.0.0.1` },
      });
      statuses.push(r.status);
    }
    return statuses;
  };
  const env = { TRACKGATE_FAILED_TOKEN_LIMIT: '2' };
  // 127.0.0.1 (the test's own address) is the proxy; the chain ends with a second hop of it
  const proxied = await startTestServer(t, { env: { ...env, TRACKGATE_TRUSTED_PROXIES: '127.0.0.0/8, ::1' } });
  t.deepEqual(await failTwice(proxied, '203.0.113.5'), [401, 401, 429], 'the forwarded client is limited');
  t.deepEqual(await failTwice(proxied, '203.0.113.6'), [401, 401, 429], 'another client behind the proxy is not');

  const direct = await startTestServer(t, { env: { ...env, TRACKGATE_TRUSTED_PROXIES: '10.0.0.1' } });
  t.deepEqual(await failTwice(direct, '203.0.113.5'), [401, 401, 429]);
  t.deepEqual(await failTwice(direct, '203.0.113.6'), [429, 429, 429], 'from no trusted proxy the header is ignored');

  t.throws(() => loadConfig(testEnv({ TRACKGATE_TRUSTED_PROXIES: 'proxy.internal' })), {
    message: /^TRACKGATE_TRUSTED_PROXIES: "proxy.internal" is not an address or a CIDR range/,
  });
  t.deepEqual(loadConfig(testEnv({ TRACKGATE_TRUSTED_PROXIES: '10.0.0.0/8,[::1]' })).trustedProxies, [
    '10.0.0.0/8',
    '::1',
  ]);
});

/** What the plain HTTP port answers to `raw`, up to its close. */
function rawAnswer(port: number, raw: string): Promise<string> {
  return new Promise((resolve) => {
    const c = net.connect({ port, host: '127.0.0.1' }, () => c.write(raw));
    let text = '';
    c.on('data', (d: Buffer) => (text += d.toString('latin1')));
    c.on('error', () => {});
    c.on('close', () => resolve(text));
  });
}

test('https: the plain HTTP port still answers a request it cannot parse as Node does (400, 431)', async (t) => {
  const s = await startTestServer(t);
  t.regex(await rawAnswer(s.running.ports.http, 'NOT HTTP AT ALL\r\n\r\n'), /^HTTP\/1\.1 400 Bad Request\r\n/);
  const huge = `GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;
  t.regex(await rawAnswer(s.running.ports.http, huge), /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
  t.is((await s.request('GET', '/api/health')).status, 200);
});
