import test, { type ExecutionContext } from 'ava';
import { readdirSync } from 'node:fs';
import net from 'node:net';
import mqtt from 'mqtt';
import { createStorage } from '../../helpers/backends.js';
import { ADMIN_KEY, testEnv } from '../../helpers/server.js';
import { spawnTrackgate } from '../../helpers/spawn-trackgate.js';
import { teltonikaSession } from '../../helpers/tracker-client.js';
import { timed, until } from '../../helpers/wait.js';

// The process's open-file limit, small enough that a few hundred sockets reach it (trackgate
// itself holds about 30 descriptors once it listens).
const NOFILE = 400;
const IMEI = '356307042441013';

interface Held {
  socket: net.Socket;
  /** closed by the server */
  closed: boolean;
}

function openSocket(port: number): Promise<Held> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    const held: Held = { socket, closed: false };
    socket.on('close', () => (held.closed = true));
    socket.on('error', () => {});
    socket.once('connect', () => resolve(held));
    socket.once('error', reject);
  });
}

const logLine = (lines: string[], msg: string): Record<string, number> | undefined => {
  for (const l of lines) {
    try {
      const entry = JSON.parse(l) as { msg?: string };
      if (entry.msg === msg) return entry as Record<string, number>;
    } catch {
      /* not a log line */
    }
  }
  return undefined;
};

const metric = (text: string, name: string): number =>
  text
    .split('\n')
    .filter((l) => l.startsWith(name))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);

async function reserveKept(t: ExecutionContext, gatewayProcesses: string): Promise<void> {
  const storage = await createStorage('sqlite');
  t.teardown(() => storage.cleanup());
  const env = testEnv({
    ...storage.env,
    TRACKGATE_LOG_LEVEL: 'info',
    TRACKGATE_TELTONIKA_PORT: '0',
    TRACKGATE_OSMAND_PORT: '0',
    TRACKGATE_MQTT_PORT: '0',
    TRACKGATE_GATEWAY_PROCESSES: gatewayProcesses,
  });
  const lines: string[] = [];
  const { child, ports, gateways } = await spawnTrackgate(env, { nofile: NOFILE, lines });
  // the process that holds the tracker connections
  const holder = gatewayProcesses === '0' ? child.pid! : gateways[0]!;
  t.teardown(() => child.kill('SIGKILL'));
  const base = `http://127.0.0.1:${ports.http}`;
  const rest = async (path: string, init: RequestInit = {}) =>
    (await timed(10_000, `REST ${path}`, () => fetch(base + path, init))).value;
  const token = (
    (await (
      await rest('/api/Auth/Token', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ userName: 'admin', apiKey: ADMIN_KEY }),
      })
    ).json()) as { token: string }
  ).token;
  const auth = { authorization: `Bearer ${token}` };
  t.is(
    (
      await rest('/api/devices', {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ id: IMEI, name: 'fd' }),
      })
    ).status,
    201,
  );

  // as many idle tracker connections as the process may open files
  const held: Held[] = [];
  for (let i = 0; i < NOFILE; i++) held.push(await openSocket(ports.teltonika));
  await until(
    'the tracker listener starts refusing',
    () =>
      logLine(
        lines,
        'tracker listeners refuse new connections: the process is near its open-file limit (ulimit -n); the reserve is kept for REST, MQTT and the database',
      ) !== undefined,
    20_000,
  );
  const refusing = logLine(
    lines,
    'tracker listeners refuse new connections: the process is near its open-file limit (ulimit -n); the reserve is kept for REST, MQTT and the database',
  )!;
  t.is(refusing.openFileLimit, NOFILE);
  t.is(refusing.reserve, 100, 'the larger of 100 and 5 % of the limit');
  const capacity = refusing.capacity;
  t.true(capacity > 100 && capacity < NOFILE - 100, `capacity ${capacity}`);
  await until(
    'every connection past the capacity is closed at once',
    () => held.filter((h) => h.closed).length === NOFILE - capacity,
    20_000,
  );
  const descriptors = readdirSync(`/proc/${holder}/fd`).length;
  t.true(descriptors <= NOFILE - 90, `${descriptors} descriptors open of ${NOFILE}: the reserve is free`);

  // REST and MQTT still answer, and another tracker connection is closed at once
  t.is((await rest('/api/devices', { headers: auth })).status, 200);
  const client = await timed(10_000, 'MQTT CONNACK', () =>
    mqtt.connectAsync(`mqtt://127.0.0.1:${ports.mqtt}`, {
      username: 'admin',
      password: ADMIN_KEY,
      clientId: 'admin-fd',
      reconnectPeriod: 0,
      connectTimeout: 8000,
    }),
  );
  t.true(client.value.connected);
  await client.value.endAsync(true);
  const late = await openSocket(ports.teltonika);
  await until('a new tracker connection is closed at once', () => late.closed);
  const phone = await openSocket(ports.osmand);
  phone.socket.write('GET /?id=x&lat=1&lon=2 HTTP/1.1\r\n\r\n');
  await until('a new OsmAnd connection too', () => phone.closed);
  await until('the refusals are counted in /metrics', async () => {
    const text = await (await rest('/metrics')).text();
    return (
      metric(text, 'trackgate_tracker_connections_refused_total{protocol="teltonika",reason="descriptor_limit"}') ===
        NOFILE - capacity + 1 &&
      metric(text, 'trackgate_tracker_connections_refused_total{protocol="osmand",reason="descriptor_limit"}') === 1
    );
  });
  t.is(lines.filter((l) => l.includes('tracker listeners refuse new connections')).length, 1, 'said once');

  // a twentieth of them close: trackers are taken again, said once
  const open = held.filter((h) => !h.closed);
  for (const h of open.slice(0, Math.ceil(capacity / 20) + 1)) h.socket.destroy();
  await until(
    'the listener accepts again',
    () => logLine(lines, 'tracker listeners accept new connections again') !== undefined,
    20_000,
  );
  t.is(logLine(lines, 'tracker listeners accept new connections again')!.refused, NOFILE - capacity + 2);
  await teltonikaSession(t, ports.teltonika, IMEI);
  for (const h of held) h.socket.destroy();
}

test('descriptor-gate: tracker listeners in the core stop below the open-file limit, so REST and MQTT still answer; said and counted', async (t) => {
  await reserveKept(t, '0');
});

test('descriptor-gate: the same in a gateway process', async (t) => {
  await reserveKept(t, '1');
});
