/**
 * MQTT over WebSocket on the REST ports' `/mqtt` (docs/mqtt.md): the console's live feed from the
 * page's own origin, over HTTPS as over HTTP, with the same login as the MQTT WebSocket port; other
 * upgrade paths, and `/mqtt` with MQTT over WebSocket off, are a 404.
 */
import test from 'ava';
import mqtt, { type MqttClient } from 'mqtt';
import net from 'node:net';
import { makeCertificate, certificateFiles, type TestCertificate } from '../helpers/certificates.js';
import { ADMIN_KEY, createDevice, startTestServer, type TestServer } from '../helpers/server.js';
import { PATIENCE_MS, until } from '../helpers/wait.js';

const DEVICE = '356307042441013';

let cert: TestCertificate;
test.before(async () => {
  cert = await makeCertificate('trackgate-mqtt-path');
});

async function connect(t: { teardown(fn: () => unknown): void }, url: string, password: string): Promise<MqttClient> {
  const client = await mqtt.connectAsync(url, {
    // an API user's client id starts with its user name
    clientId: `admin-${Math.random().toString(36).slice(2, 10)}`,
    username: 'admin',
    password,
    ca: cert.cert,
    reconnectPeriod: 0,
    connectTimeout: PATIENCE_MS,
  });
  t.teardown(() => client.endAsync(true));
  return client;
}

/** The status line of an upgrade request to `path` on a plain port. */
function upgradeStatus(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () =>
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: mqtt\r\n\r\n',
      ),
    );
    let text = '';
    socket.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      if (text.includes('\r\n')) {
        resolve(text.slice(0, text.indexOf('\r\n')));
        socket.destroy();
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
  });
}

async function postLocation(s: TestServer, latitude: number): Promise<void> {
  const res = await s.request('POST', `/api/devices/${DEVICE}/locations`, {
    token: s.adminToken,
    body: { location: { dateTime: new Date().toISOString(), latitude, longitude: -3.7 } },
  });
  if (res.status >= 300) throw new Error(`POST location: ${res.status} ${JSON.stringify(res.body)}`);
}

test('mqtt path: the live feed over wss:// on the HTTPS port and ws:// on the HTTP port, at /mqtt', async (t) => {
  const files = certificateFiles(t, cert);
  const s = await startTestServer(t, {
    env: {
      TRACKGATE_TLS_CERT: files.certFile,
      TRACKGATE_TLS_KEY: files.keyFile,
      TRACKGATE_HTTPS_PORT: '0',
      TRACKGATE_MQTT_WS_PORT: '0',
    },
  });
  await createDevice(s, DEVICE);
  const token = s.adminToken;
  const secure = await connect(t, `wss://localhost:${s.running.ports.https}/mqtt`, token);
  const plain = await connect(t, `ws://127.0.0.1:${s.running.ports.http}/mqtt`, ADMIN_KEY);
  const heard: { via: string; latitude: number }[] = [];
  for (const [via, c] of [
    ['wss', secure],
    ['ws', plain],
  ] as const) {
    c.on('message', (_topic, payload) => heard.push({ via, latitude: JSON.parse(payload.toString()).latitude }));
    await c.subscribeAsync(`live/${DEVICE}/locations`);
  }
  await postLocation(s, 40.25);
  await until('both feeds hear the location', () => heard.length >= 2);
  t.deepEqual(heard.map((h) => h.latitude).sort(), [40.25, 40.25]);
  t.deepEqual(heard.map((h) => h.via).sort(), ['ws', 'wss']);

  // the same login rules as the MQTT WebSocket port: a wrong key is refused
  await t.throwsAsync(connect(t, `ws://127.0.0.1:${s.running.ports.http}/mqtt`, 'wrong-key'), {
    message: /Not authorized|Bad username or password/,
  });
  // only /mqtt upgrades; the REST API itself goes on answering
  t.is(await upgradeStatus(s.running.ports.http, '/api/health'), 'HTTP/1.1 404 Not Found');
  t.is(await upgradeStatus(s.running.ports.http, '/mqtt/more'), 'HTTP/1.1 404 Not Found');
  t.is(await upgradeStatus(s.running.ports.http, '/mqtt?x=1'), 'HTTP/1.1 101 Switching Protocols');
  t.is((await s.request('GET', '/api/health')).status, 200);
});

test('mqtt path: with MQTT over WebSocket off, /mqtt is a 404 and the console polls', async (t) => {
  const s = await startTestServer(t, { env: { TRACKGATE_MQTT_WS_PORT: 'off' } });
  t.is(await upgradeStatus(s.running.ports.http, '/mqtt'), 'HTTP/1.1 404 Not Found');
  const config = (await (await fetch(`${s.base}/console/config.json`)).json()) as Record<string, unknown>;
  t.is(config.mqttWsPath, null);
  t.is(config.mqttWsPort, null);
});

test('mqtt path: behind a trusted proxy, failed logins count against the forwarded client, not the proxy', async (t) => {
  const s = await startTestServer(t, {
    env: { TRACKGATE_MQTT_WS_PORT: '0', TRACKGATE_TRUSTED_PROXIES: '127.0.0.1' },
  });
  const url = `ws://127.0.0.1:${s.running.ports.http}/mqtt`;
  const from = (address: string, password: string) =>
    mqtt.connectAsync(url, {
      clientId: `admin-${Math.random().toString(36).slice(2, 10)}`,
      username: 'admin',
      password,
      reconnectPeriod: 0,
      connectTimeout: PATIENCE_MS,
      wsOptions: { headers: { 'x-forwarded-for': address } },
    });
  // ten wrong keys from one client behind the proxy: that client is held off, even with the right key
  for (let i = 0; i < 10; i++) await t.throwsAsync(from('203.0.113.7', 'wrong-key'));
  await t.throwsAsync(from('203.0.113.7', ADMIN_KEY), { message: /Server unavailable|Not authorized/ });
  // another client behind the same proxy logs in
  const other = await from('203.0.113.8', ADMIN_KEY);
  t.true(other.connected);
  await other.endAsync(true);
});
