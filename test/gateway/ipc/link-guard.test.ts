import test from 'ava';
import net from 'node:net';
import { once } from 'node:events';
import { startServer } from '../../helpers/server.js';
import { capturingLogger } from '../../helpers/capture-logger.js';
import { PATIENCE_MS, until } from '../../helpers/wait.js';
import { silentLogger } from '../../../core/logger.js';
import { systemClock } from '../../../core/clock.js';
import { startCoreLink } from '../../../gateway/ipc/core-link.server.js';
import { connectCoreLink } from '../../../gateway/ipc/core-link.client.js';

const secret = 'a-secret-of-this-test-0123456789';

/** Sends `bytes` to the link and resolves once the core has closed the connection (or after PATIENCE_MS: 'open'). */
async function sendAndWait(port: number, bytes: Buffer): Promise<'closed' | 'open'> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  socket.write(bytes);
  const closed = once(socket, 'close').then(() => 'closed' as const);
  const timer = new Promise<'open'>((r) => setTimeout(() => r('open'), PATIENCE_MS).unref());
  const outcome = await Promise.race([closed, timer]);
  socket.destroy();
  return outcome;
}

test('gateway.ipc link guard: what anyone can send to the link port before the secret (an announced message of over 1 GiB, of 100 MB, an HTTP request) closes that connection only; the core and its gateways go on', async (t) => {
  const s = await startServer('sqlite');
  t.teardown(() => s.stop());
  t.is((await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: '356307042441013', name: 'x' } })).status, 201);
  const logger = capturingLogger();
  const link = await startCoreLink({ host: '127.0.0.1', port: 0, secret, ...s.running.services, logger });
  t.teardown(() => link.close());
  const port = link.port!;
  const client = connectCoreLink({
    host: '127.0.0.1', port, secret, clock: systemClock, logger: silentLogger,
    hello: () => ({ ports: null, online: [] }), onDeliver: () => undefined, onDrop: () => undefined,
  });
  t.teardown(() => client.close());
  await client.ready();

  const attacks: [string, Buffer][] = [
    // "IPC" and a net-ipc length tag of 2^31 - 1 + …: net-ipc's socket.read threw (ERR_OUT_OF_RANGE) and the core exited
    ['a message of over 1 GiB announced', Buffer.from('4950430804000080', 'hex')],
    ['a message of 100 MB announced', Buffer.concat([Buffer.from('IPC'), Buffer.from([47, 88, 64 + 128])])],
    ['an HTTP request', Buffer.from(`GET / HTTP/1.1\r\nHost: x\r\n${'X-A: b\r\n'.repeat(10)}`)],
  ];
  for (const [what, bytes] of attacks) {
    t.is(await sendAndWait(port, bytes), 'closed', `${what}: the connection is closed`);
  }
  await until('every refused connection logged', () => logger.at('warn', 'gateway link connection closed').length >= attacks.length);
  // the link still serves its gateway process, and a new one
  const answer = await client.directory.resolve('356307042441013', 'teltonika', null);
  t.is(answer.status, 'ok');
  const second = connectCoreLink({
    host: '127.0.0.1', port, secret, clock: systemClock, logger: silentLogger,
    hello: () => ({ ports: null, online: [] }), onDeliver: () => undefined, onDrop: () => undefined,
  });
  t.teardown(() => second.close());
  await second.ready();
  t.is((await second.directory.resolve('356307042441013', 'teltonika', null)).status, 'ok');
  t.is(link.connections(), 2);
});

test('gateway.ipc link guard: connections with a wrong secret are refused and their log lines are bounded', async (t) => {
  const s = await startServer('sqlite');
  t.teardown(() => s.stop());
  const logger = capturingLogger();
  const link = await startCoreLink({ host: '127.0.0.1', port: 0, secret, ...s.running.services, logger });
  t.teardown(() => link.close());
  const tries: ReturnType<typeof connectCoreLink>[] = [];
  for (let i = 0; i < 40; i++) {
    const bad = connectCoreLink({
      host: '127.0.0.1', port: link.port!, secret: `wrong-${secret}`, clock: systemClock, logger: silentLogger,
      hello: () => ({ ports: null, online: [] }), onDeliver: () => undefined, onDrop: () => undefined,
    });
    tries.push(bad);
  }
  t.teardown(() => tries.forEach((c) => c.close()));
  await until('refusals logged', () => logger.at('warn', 'gateway process refused: wrong secret').length >= 20);
  await new Promise((r) => setTimeout(r, 1500));
  t.is(link.connections(), 0);
  t.true(logger.at('warn', 'gateway process refused: wrong secret').length <= 20, 'at most 20 lines a minute');
});

test('gateway.ipc link: a gateway whose secret the core refuses says so once, naming TRACKGATE_GATEWAY_SECRET, not at every retry', async (t) => {
  const s = await startServer('sqlite');
  t.teardown(() => s.stop());
  const link = await startCoreLink({ host: '127.0.0.1', port: 0, secret, ...s.running.services, logger: silentLogger });
  t.teardown(() => link.close());
  const logger = capturingLogger();
  const bad = connectCoreLink({
    host: '127.0.0.1', port: link.port!, secret: `wrong-${secret}`, clock: systemClock, logger,
    hello: () => ({ ports: null, online: [] }), onDeliver: () => undefined, onDrop: () => undefined,
  });
  t.teardown(() => bad.close());
  await until('the refusal said', () => logger.at('error', /TRACKGATE_GATEWAY_SECRET/).length > 0);
  await new Promise((r) => setTimeout(r, 2500));
  t.is(logger.at('error', /TRACKGATE_GATEWAY_SECRET/).length, 1, 'said once');
  t.true(logger.at('warn', /hello refused/).length <= 1, `${logger.at('warn', /hello refused/).length} "hello refused" lines in 2.5 s of retries`);
  t.is(link.connections(), 0);
});
