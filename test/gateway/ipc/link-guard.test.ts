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
import { LINK_MESSAGE_VALUES } from '../../../gateway/ipc/link-guard.js';
import { deflatedZeroArray, netIpcHello, netIpcMessage } from '../../helpers/link-bomb.js';
import { pack, Packr } from 'msgpackr';

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
  t.is(
    (await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: '356307042441013', name: 'x' } }))
      .status,
    201,
  );
  const logger = capturingLogger();
  const link = await startCoreLink({ host: '127.0.0.1', port: 0, secret, ...s.running.services, logger });
  t.teardown(() => link.close());
  const port = link.port!;
  const client = connectCoreLink({
    host: '127.0.0.1',
    port,
    secret,
    clock: systemClock,
    logger: silentLogger,
    hello: () => ({ ports: null, online: [] }),
    onDeliver: () => undefined,
    onDrop: () => undefined,
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
  await until(
    'every refused connection logged',
    () => logger.at('warn', 'gateway link connection closed').length >= attacks.length,
  );
  // the link still serves its gateway process, and a new one
  const answer = await client.directory.resolve('356307042441013', 'teltonika', null);
  t.is(answer.status, 'ok');
  const second = connectCoreLink({
    host: '127.0.0.1',
    port,
    secret,
    clock: systemClock,
    logger: silentLogger,
    hello: () => ({ ports: null, online: [] }),
    onDeliver: () => undefined,
    onDrop: () => undefined,
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
      host: '127.0.0.1',
      port: link.port!,
      secret: `wrong-${secret}`,
      clock: systemClock,
      logger: silentLogger,
      hello: () => ({ ports: null, online: [] }),
      onDeliver: () => undefined,
      onDrop: () => undefined,
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
    host: '127.0.0.1',
    port: link.port!,
    secret: `wrong-${secret}`,
    clock: systemClock,
    logger,
    hello: () => ({ ports: null, online: [] }),
    onDeliver: () => undefined,
    onDrop: () => undefined,
  });
  t.teardown(() => bad.close());
  await until('the refusal said', () => logger.at('error', /TRACKGATE_GATEWAY_SECRET/).length > 0);
  await new Promise((r) => setTimeout(r, 2500));
  t.is(logger.at('error', /TRACKGATE_GATEWAY_SECRET/).length, 1, 'said once');
  t.true(
    logger.at('warn', /hello refused/).length <= 1,
    `${logger.at('warn', /hello refused/).length} "hello refused" lines in 2.5 s of retries`,
  );
  t.is(link.connections(), 0);
});

/** A peer that presents the secret in its hello (asking for `ask`) and waits for the core's answer to it. */
async function peerWithSecret(port: number, ask: { compress?: boolean; messagepack?: boolean }) {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  const closed = once(socket, 'close');
  socket.write(Buffer.concat([Buffer.from('IPC'), netIpcHello({ secret, pid: process.pid }, ask)]));
  // the hello's answer: the connection is up (or refused, closed after it)
  await once(socket, 'data');
  socket.resume();
  return {
    /** writes `bytes` and resolves once the core has closed the connection (or 'open' after 5 s) */
    async send(bytes: Buffer): Promise<'closed' | 'open'> {
      if (!socket.destroyed) socket.write(bytes);
      let timer: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        closed.then(() => 'closed' as const),
        new Promise<'open'>((r) => (timer = setTimeout(() => r('open'), 5000))),
      ]);
      clearTimeout(timer);
      socket.destroy();
      return outcome;
    },
  };
}

test('gateway.ipc link guard: a peer with the secret is held to the limits too: compression and JSON are refused, and a MessagePack message of too many values, nested too deep, announcing more than it holds or using an extension no gateway sends closes its connection before it is decoded; the core and its gateways go on', async (t) => {
  const s = await startServer('sqlite');
  t.teardown(() => s.stop());
  t.is(
    (await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: '356307042441013', name: 'x' } }))
      .status,
    201,
  );
  const logger = capturingLogger();
  const link = await startCoreLink({ host: '127.0.0.1', port: 0, secret, ...s.running.services, logger });
  t.teardown(() => link.close());
  const port = link.port!;
  const client = connectCoreLink({
    host: '127.0.0.1',
    port,
    secret,
    clock: systemClock,
    logger: silentLogger,
    hello: () => ({ ports: null, online: [] }),
    onDeliver: () => undefined,
    onDrop: () => undefined,
  });
  t.teardown(() => client.close());
  await client.ready();

  // asked in the hello: refused once the secret is checked, before any message after it is read
  t.is(
    await (await peerWithSecret(port, { compress: true, messagepack: true })).send(
      netIpcMessage(deflatedZeroArray(1000)),
    ),
    'closed',
    'compression',
  );
  t.is(
    await (await peerWithSecret(port, { messagepack: false })).send(
      netIpcMessage(Buffer.from(`[${'0,'.repeat(1000)}0]`)),
    ),
    'closed',
    'JSON',
  );

  let deep: unknown = 1;
  for (let i = 0; i < 70; i++) deep = [deep];
  const zeros = Buffer.alloc(5 + 3_000_000);
  zeros[0] = 0xdd;
  zeros.writeUInt32BE(3_000_000, 1);
  const messages: [string, Buffer][] = [
    [`more than ${LINK_MESSAGE_VALUES} values`, zeros],
    ['arrays nested 70 deep', pack({ t: 1, d: deep })],
    // an array of 2^32 - 1 elements announced in 6 bytes: msgpackr would allocate it at once
    ['an array announcing more than it holds', Buffer.from([0xdd, 0xff, 0xff, 0xff, 0xff, 0x00])],
    ["msgpackr's record extension", new Packr({ useRecords: true }).pack({ t: 1, d: { a: 1 } })],
  ];
  for (const [what, bytes] of messages) {
    const peer = await peerWithSecret(port, { messagepack: true });
    t.is(await peer.send(netIpcMessage(bytes)), 'closed', what);
  }
  await until(
    'every refusal logged with why',
    () => logger.at('warn', 'gateway link connection closed').length >= 2 + messages.length,
    5000,
  );
  const reasons = logger
    .at('warn', 'gateway link connection closed')
    .map((l) => String((l as { reason?: unknown }).reason));
  t.true(
    reasons.some((r) => r.includes('compression')),
    reasons.join('; '),
  );
  t.true(reasons.some((r) => r.includes('MessagePack')));
  t.true(reasons.some((r) => r.includes(`more than ${LINK_MESSAGE_VALUES} values`)));
  t.true(reasons.some((r) => r.includes('nests deeper than')));
  t.true(reasons.some((r) => r.includes('announces more values than it holds')));
  t.true(reasons.some((r) => r.includes('extension')));
  t.is(link.connections(), 1, 'none of them is connected');
  // the gateway with the secret still works, and the same peer is taken when it keeps to the limits
  t.is((await client.directory.resolve('356307042441013', 'teltonika', null)).status, 'ok');
  const fine = await peerWithSecret(port, { messagepack: true });
  t.is(
    await fine.send(netIpcMessage(pack({ t: 1, d: { t: 'counts', source: 'x', trackers: {} } }))),
    'open',
    'a message within the limits is taken',
  );
});
