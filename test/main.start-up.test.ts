import test from 'ava';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ADMIN_KEY, testEnv } from './helpers/server.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A port free a moment ago: the REST API's, known before the server says where it listens. */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function ask(
  url: string,
  init?: RequestInit,
): Promise<{ status: number; body: any; retryAfter: string | null } | undefined> {
  try {
    const res = await fetch(url, init);
    return { status: res.status, body: await res.json(), retryAfter: res.headers.get('retry-after') };
  } catch {
    return undefined; // not listening yet
  }
}

test('main.start-up: health says "starting" (503) until the first account exists, and a token request right after its first 200 succeeds (gateway processes on)', async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'trackgate-start-up-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const httpPort = await freePort();
  // the default on a box of more than one core: the tracker listeners in gateway processes, forked before the first account is made
  const env = {
    ...process.env,
    ...testEnv({
      TRACKGATE_DATA_DIR: dataDir,
      TRACKGATE_HTTP_PORT: String(httpPort),
      TRACKGATE_GATEWAY_PROCESSES: '2',
      TRACKGATE_TELTONIKA_PORT: '0',
      TRACKGATE_LOG_LEVEL: 'info',
    }),
  };
  const child = spawn(process.execPath, ['--import=tsx', path.join(root, 'main.ts')], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  t.teardown(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
  });
  let exited = false;
  child.once('exit', () => (exited = true));
  createInterface({ input: child.stdout! }).on('line', () => {});

  const base = `http://127.0.0.1:${httpPort}`;
  const token = () =>
    ask(`${base}/api/Auth/Token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userName: 'admin', apiKey: ADMIN_KEY }),
    });
  const starting: Awaited<ReturnType<typeof ask>>[] = [];
  const deadline = Date.now() + 60_000;
  let health: Awaited<ReturnType<typeof ask>>;
  for (;;) {
    if (exited) throw new Error('trackgate exited during start-up');
    if (Date.now() > deadline) throw new Error(`no 200 from health within 60 s: ${JSON.stringify(starting.slice(-2))}`);
    health = await ask(`${base}/api/health`);
    if (health?.status === 200) break;
    if (health) {
      starting.push(health);
      // meanwhile the rest of the API says the same, rather than refusing the admin's right key
      const early = await token();
      if (early && early.status !== 200) starting.push(early);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  t.like(health.body, { success: true, status: 'ok' });
  const issued = await token();
  t.is(issued?.status, 200, JSON.stringify(issued?.body));
  t.truthy(issued?.body.token);
  t.true(starting.length > 0, 'health was asked while trackgate was starting');
  for (const r of starting) t.like(r, { status: 503, retryAfter: '1', body: { success: false, code: 'STARTING' } });
  t.like(starting[0]!.body, { status: 'starting' });
});

test("main.start-up: TRACKGATE_LOG_FORMAT=pretty logs readable lines, the gateway processes' too, and no JSON", async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'trackgate-pretty-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = {
    ...process.env,
    ...testEnv({
      TRACKGATE_DATA_DIR: dataDir,
      TRACKGATE_GATEWAY_PROCESSES: '1',
      TRACKGATE_TELTONIKA_PORT: '0',
      TRACKGATE_LOG_LEVEL: 'info',
      TRACKGATE_LOG_FORMAT: 'pretty',
    }),
  };
  const child = spawn(process.execPath, ['--import=tsx', path.join(root, 'main.ts')], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  t.teardown(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
  });
  const lines: string[] = [];
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      if (/ INFO {2}listening /.test(line) || line.includes('"msg":"listening"')) resolve();
    });
    void exited.then(() => reject(new Error(`exited before listening: ${lines.join('\n')}`)));
  });
  child.kill('SIGTERM');
  t.is(await exited, 0);
  const stamp = '\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}\\.\\d{3}';
  t.regex(
    lines.find((l) => / INFO {2}listening /.test(l))!,
    new RegExp(`^${stamp} INFO  listening host=127\\.0\\.0\\.1 ports=\\{"http":\\d+`),
  );
  t.true(
    lines.some((l) => new RegExp(`^${stamp} INFO  .* role=gateway worker=\\d+`).test(l)),
    `a gateway process's line: ${lines.join('\n')}`,
  );
  t.true(lines.some((l) => new RegExp(`^${stamp} INFO  stopped exitCode=0$`).test(l)));
  t.deepEqual(
    lines.filter((l) => l.startsWith('{')),
    [],
    'no JSON line',
  );
});
