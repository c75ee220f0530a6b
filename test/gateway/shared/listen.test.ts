import dgram from 'node:dgram';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { listen } from '../../../gateway/shared/listen.js';

const host = '127.0.0.1';
const ROOT = path.resolve(fileURLToPath(import.meta.url), '../../../..');

const connect = (port: number) =>
  new Promise<net.Socket>((resolve, reject) => {
    const s = net.connect({ port, host }, () => resolve(s));
    s.once('error', reject);
  });

test('gateway/shared/listen: port 0 binds a free port and reports it, for TCP, HTTP and UDP', async (t) => {
  const tcp = await listen(
    net.createServer((s) => s.end('hi')),
    { port: 0, host },
  );
  const web = await listen(
    http.createServer((_req, res) => res.end('ok')),
    { port: 0, host },
  );
  const udp = await listen(dgram.createSocket('udp4'), { port: 0, host });
  t.teardown(() => Promise.all([tcp.close(), web.close(), udp.close()]));
  for (const l of [tcp, web, udp]) t.true(l.port > 0);
  const s = await connect(tcp.port);
  const greeting = await new Promise<string>((resolve) => s.once('data', (b: Buffer) => resolve(b.toString())));
  t.is(greeting, 'hi');
  t.is(await (await fetch(`http://${host}:${web.port}/`)).text(), 'ok');
});

test('gateway/shared/listen: a port in use rejects with EADDRINUSE, for a stream server and a UDP socket', async (t) => {
  const tcp = await listen(net.createServer(), { port: 0, host });
  const udp = await listen(dgram.createSocket('udp4'), { port: 0, host });
  t.teardown(() => Promise.all([tcp.close(), udp.close()]));
  await t.throwsAsync(listen(net.createServer(), { port: tcp.port, host }), { code: 'EADDRINUSE' });
  await t.throwsAsync(listen(dgram.createSocket('udp4'), { port: udp.port, host }), { code: 'EADDRINUSE' });
});

test('gateway/shared/listen: close() ends the connections still open and frees the port', async (t) => {
  const server = http.createServer((_req, res) => res.end('ok'));
  server.keepAliveTimeout = 60_000;
  const l = await listen(server, { port: 0, host });
  const idle = await connect(l.port);
  const closed = new Promise<void>((resolve) => idle.once('close', () => resolve()));
  const started = Date.now();
  await l.close();
  await closed;
  t.true(Date.now() - started < server.keepAliveTimeout / 2, 'not left to the keep-alive timeout');
  const again = await listen(net.createServer(), { port: l.port, host });
  t.is(again.port, l.port);
  await again.close();
});

/** the source folders of the product (what `npm run lint:imports` checks) */
function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));
}

test('gateway/shared/listen: the one place that listens and reads the bound port', (t) => {
  const files = [...['config', 'protocols', 'core', 'gateway', 'api'].flatMap(sources), 'main.ts', 'cli.ts'];
  const others = files
    .filter((f) => f !== path.join('gateway', 'shared', 'listen.ts'))
    .filter((f) => {
      const text = readFileSync(path.join(ROOT, f), 'utf8');
      return /\.listen\(|\.bind\(\w+, |\.address\(\)/.test(text);
    });
  t.deepEqual(others, []);
});
