import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { createDevice, startServer, startTestServer, testEnv, type TestServer } from '../../helpers/server.js';
import { capturingLogger, type CapturingLogger } from '../../helpers/capture-logger.js';
import { teltonikaSession } from '../../helpers/tracker-client.js';
import { until } from '../../helpers/wait.js';
import * as F from '../../helpers/frames.js';

// Serial: a trackgate with gateway processes is a cluster primary of this test process, and two
// started at once could share a port (see test/gateway/ipc/gateway-processes.test.ts).
const IMEI = '356307042441013';
const PHONE = 'phone-identify-1';
const T0 = Date.UTC(2026, 2, 1, 10);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SECRET = 'edge-gateway-secret-0123456789abcdef';

interface Raw {
  socket: net.Socket;
  closed: boolean;
}

function connect(port: number): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    const raw: Raw = { socket, closed: false };
    socket.on('close', () => (raw.closed = true));
    socket.on('error', () => {});
    socket.once('connect', () => resolve(raw));
    socket.once('error', reject);
  });
}

/** Sends an OsmAnd request on the connection every 200 ms (keep-alive) until it closes or `stop` is called; answers by status. */
function osmandEvery200ms(raw: Raw, id: string, target = '/'): { statuses: number[]; stop(): void } {
  const statuses: number[] = [];
  raw.socket.on('data', (d: Buffer) => {
    for (const m of d.toString('latin1').matchAll(/HTTP\/1\.1 (\d{3})/g)) statuses.push(Number(m[1]));
  });
  let n = 0;
  const send = () => {
    if (!raw.closed)
      raw.socket.write(
        `GET ${target}?id=${id}&lat=40.5&lon=-3.5&timestamp=${T0 / 1000 + n++} HTTP/1.1\r\nHost: x\r\n\r\n`,
      );
  };
  send();
  const timer = setInterval(send, 200);
  raw.socket.once('close', () => clearInterval(timer));
  return { statuses, stop: () => clearInterval(timer) };
}

const metric = (text: string, line: string): number => {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found ? Number(found.slice(line.length + 1)) : Number.NaN;
};

async function start(t: ExecutionContext, logger: CapturingLogger, gatewayProcesses: string): Promise<TestServer> {
  const s = await startTestServer(t, {
    logger,
    env: {
      TRACKGATE_GATEWAY_PROCESSES: gatewayProcesses,
      TRACKGATE_IDENTIFY_TIMEOUT: '1',
      TRACKGATE_TELTONIKA_PORT: '0',
      TRACKGATE_OSMAND_PORT: '0',
    },
  });
  for (const id of [IMEI, PHONE]) await createDevice(s, id);
  return s;
}

async function unidentifiedAreClosed(t: ExecutionContext, gatewayProcesses: string): Promise<CapturingLogger> {
  const logger = capturingLogger();
  const s = await start(t, logger, gatewayProcesses);
  const { teltonika, osmand } = s.running.ports;
  // first, connections that identify: they outlive the timeout
  const device = await teltonikaSession(t, teltonika, IMEI);
  const phone = osmandEvery200ms(await connect(osmand), PHONE);
  t.teardown(() => phone.stop());
  await until('the phone is answered', () => phone.statuses.includes(200));
  // then an idle TCP connection, a half-sent login, an idle HTTP connection, and an HTTP
  // connection that keeps sending requests of an unknown device
  const idle = await connect(teltonika);
  const half = await connect(teltonika);
  half.socket.write(F.teltonikaLogin(IMEI).subarray(0, 6));
  const idleHttp = await connect(osmand);
  const strangerConnection = await connect(osmand);
  const stranger = osmandEvery200ms(strangerConnection, 'nobody-at-all');
  t.teardown(() => stranger.stop());
  await until(
    'the unidentified connections are closed',
    () => idle.closed && half.closed && idleHttp.closed && strangerConnection.closed,
    20_000,
  );
  t.true(
    stranger.statuses.length > 0 && stranger.statuses.every((code) => code === 404),
    'the stranger was answered 404 until closed',
  );

  // the connections that identified earlier are still open and served
  t.false(device.closed);
  device.write(F.teltonikaAvl([{ time: new Date(T0), lat: 40, lon: -3 }]));
  t.deepEqual(await device.read(4), Buffer.from([0, 0, 0, 1]));
  const answered = phone.statuses.length;
  await until('the phone is answered again', () => phone.statuses.length > answered + 1);
  t.true(phone.statuses.every((code) => code === 200));

  await until('the timeouts are counted in /metrics', async () => {
    const text = (await s.request('GET', '/metrics')).body as string;
    return (
      metric(text, 'trackgate_tracker_identify_timeouts_total{protocol="teltonika"}') === 2 &&
      metric(text, 'trackgate_tracker_identify_timeouts_total{protocol="osmand"}') === 2
    );
  });
  return logger;
}

test.serial(
  'identify-timeout: TCP and OsmAnd connections that name no known device within TRACKGATE_IDENTIFY_TIMEOUT are closed, logged once and counted',
  async (t) => {
    const logger = await unidentifiedAreClosed(t, '0');
    const warned = logger.at(
      'warn',
      'closing a tracker connection that did not identify a known device in time (TRACKGATE_IDENTIFY_TIMEOUT)',
    );
    t.is(warned.length, 1, 'one line in full; the others are counted');
    t.is(warned[0]!.seconds, 1);
    const reasons = logger.at('info', 'tracker disconnected').map((e) => e.reason);
    t.deepEqual(reasons, ['not identified within 1 s', 'not identified within 1 s']);
  },
);

test.serial('identify-timeout: the same in a gateway process', async (t) => {
  await unidentifiedAreClosed(t, '1');
});

test.serial(
  'identify-timeout: an edge gateway closes an unidentified connection too, and the core counts it',
  async (t) => {
    const s = await startServer('sqlite', {
      env: { TRACKGATE_GATEWAY_LINK_PORT: '0', TRACKGATE_GATEWAY_SECRET: SECRET },
    });
    t.teardown(() => s.stop());
    const env = testEnv({
      TRACKGATE_LOG_LEVEL: 'info',
      TRACKGATE_TELTONIKA_PORT: '0',
      TRACKGATE_GATEWAY_SECRET: SECRET,
      TRACKGATE_IDENTIFY_TIMEOUT: '1',
    });
    const edge = spawn(
      process.execPath,
      ['--import=tsx', 'cli.ts', 'gateway', '--core', `127.0.0.1:${s.running.ports.gatewayLink}`],
      { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    t.teardown(() => edge.kill('SIGKILL'));
    const lines: { msg?: string; ports?: Record<string, number>; reason?: string }[] = [];
    createInterface({ input: edge.stdout! }).on('line', (line) => {
      try {
        lines.push(JSON.parse(line));
      } catch {
        /* not a log line */
      }
    });
    await until('the edge listens', () => lines.some((l) => l.msg === 'listening'), 60_000);
    const idle = await connect(lines.find((l) => l.msg === 'listening')!.ports!.teltonika);
    await until('the idle connection is closed', () => idle.closed, 20_000);
    await until('the edge logs why', () =>
      lines.some((l) => l.msg === 'tracker disconnected' && l.reason === 'not identified within 1 s'),
    );
    await until(
      'the core counts it',
      async () =>
        metric(
          (await s.request('GET', '/metrics')).body as string,
          'trackgate_tracker_identify_timeouts_total{protocol="teltonika"}',
        ) === 1,
    );
    t.pass('closed by the edge, logged there and counted by the core');
  },
);

test('identify-timeout: an OsmAnd phone whose request targets lack the leading slash stays connected once identified', async (t) => {
  const logger = capturingLogger();
  const s = await start(t, logger, '0');
  const { osmand } = s.running.ports;
  // `GET ?id=…`: the connection is read through the stream that writes the slash in
  const raw = await connect(osmand);
  const phone = osmandEvery200ms(raw, PHONE, '');
  t.teardown(() => phone.stop());
  await until('the phone is answered', () => phone.statuses.includes(200));
  // an idle connection opened after it: once it is closed, the phone's timeout has passed too
  const idle = await connect(osmand);
  await until('the idle connection is closed', () => idle.closed);
  const answered = phone.statuses.length;
  await until('the phone is answered again after the timeout', () => phone.statuses.length > answered || raw.closed);
  t.false(raw.closed, 'the phone is not closed as unidentified');
  t.false(
    phone.statuses.some((st) => st !== 200),
    phone.statuses.join(','),
  );
  phone.stop();
});
