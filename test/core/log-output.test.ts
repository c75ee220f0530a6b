/**
 * core/log-output.ts: log lines written in blocks, bounded while the output does not take them,
 * and never able to stop the process (the end-to-end case, a reader gone, is in test/main.test.ts).
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LogOutput } from '../../core/log-output.js';
import { until } from '../helpers/wait.js';

function tempFile(t: { teardown(fn: () => unknown): void }): { fd: number; read(): string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trackgate-log-'));
  const file = path.join(dir, 'out.log');
  const fd = fs.openSync(file, 'w');
  t.teardown(() => {
    fs.closeSync(fd);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { fd, read: () => fs.readFileSync(file, 'utf8') };
}

const settle = () => new Promise((r) => setTimeout(r, 50));

test('lines wait until a block is full or the flush, and are written in order', async (t) => {
  const f = tempFile(t);
  const out = new LogOutput({ fd: f.fd, blockBytes: 100, flushEveryMs: 60_000 });
  t.teardown(() => out.close());
  out.write('{"n":1}\n');
  out.write('{"n":2}\n');
  await settle();
  t.is(f.read(), '', 'less than a block: nothing written yet');
  out.write(`{"n":3,"pad":"${'x'.repeat(100)}"}\n`);
  await until('the block written', () => f.read().split('\n').filter(Boolean).length === 3);
  t.is(
    f
      .read()
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { n: number }).n)
      .join(),
    '1,2,3',
    'a full block, written at once',
  );
  out.write('{"n":4}\n');
  out.flushSync();
  t.true(f.read().endsWith('{"n":4}\n'), 'what waits is written on exit');
});

test('while the output takes nothing, lines wait up to the bound; the rest are counted and said in one line', async (t) => {
  const f = tempFile(t);
  const out = new LogOutput({
    fd: f.fd,
    blockBytes: 1_000_000,
    maxWaitingBytes: 100,
    flushEveryMs: 60_000,
    base: { service: 'trackgate' },
  });
  t.teardown(() => out.close());
  for (let i = 0; i < 10; i++) out.write(`{"n":${i},"pad":"${'x'.repeat(10)}"}\n`);
  out.flush();
  await until('the lines written', () => f.read().split('\n').filter(Boolean).length === 4);
  const lines = f
    .read()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  t.like(lines[0], { level: 40, service: 'trackgate', dropped: 7 });
  t.deepEqual(
    lines.slice(1).map((l) => l.n),
    [0, 1, 2],
    'the first lines kept, within 100 bytes',
  );
});

test('an output that fails (a descriptor that is not open) stops the writing, not the process', async (t) => {
  const out = new LogOutput({ fd: 1_000_000, blockBytes: 10, flushEveryMs: 60_000 });
  t.teardown(() => out.close());
  out.write('{"n":1,"pad":"xxxxxxxxxx"}\n');
  await settle();
  out.write('{"n":2}\n');
  t.notThrows(() => out.flushSync(), 'exit neither throws nor waits');
});

test("log-output: TRACKGATE_LOG_FORMAT=pretty writes each line as local time, level, message and fields, an error's stack below it", (t) => {
  const out = tempFile(t);
  const log = new LogOutput({ fd: out.fd, format: 'pretty', flushEveryMs: 10_000 });
  t.teardown(() => log.close());
  const time = new Date(2026, 2, 1, 13, 30, 5, 7).getTime();
  log.write(
    `${JSON.stringify({ level: 30, time, service: 'trackgate', host: '0.0.0.0', ports: { http: 8080 }, msg: 'listening' })}\n`,
  );
  log.write(
    `${JSON.stringify({ level: 50, time, service: 'trackgate', role: 'gateway', err: { type: 'Error', message: 'boom now', stack: 'Error: boom now\n    at f (x.ts:1:1)' }, msg: 'request failed' })}\n`,
  );
  log.flushSync();
  t.is(
    out.read(),
    [
      '2026-03-01 13:30:05.007 INFO  listening host=0.0.0.0 ports={"http":8080}',
      '2026-03-01 13:30:05.007 ERROR request failed role=gateway err="boom now"',
      '    Error: boom now',
      '        at f (x.ts:1:1)',
      '',
    ].join('\n'),
    'no colour: the output is not a terminal',
  );
});
