/**
 * Outage tests need a Redis or PostgreSQL of their own that they may stop, freeze (SIGSTOP) and
 * start again without touching the shared ones: each runs on a free port with its data in a
 * temporary folder, and `stop()` removes everything. PostgreSQL refuses to run as root, so when
 * the tests run as root the server runs as the `postgres` user.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { closedPort, connectError } from './receivers.js';
import { PATIENCE_MS } from './wait.js';

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = PATIENCE_MS): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not start within ${timeoutMs} ms`);
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
const accepts = async (port: number): Promise<boolean> => (await connectError(port)) === undefined;

export interface OwnServer {
  port: number;
  url: string;
  /** start again on the same port (after stop or kill), keeping PostgreSQL's data */
  start(): Promise<void>;
  /** stop it the hard way (SIGKILL for Redis, immediate shutdown for PostgreSQL) */
  kill(): Promise<void>;
  /** freeze and thaw the process: it keeps its sockets open but answers nothing */
  freeze(): void;
  thaw(): void;
  /** stop it for good and remove its data */
  stop(): Promise<void>;
}

export async function startOwnRedis(): Promise<OwnServer> {
  const port = await closedPort();
  let child: ChildProcess | undefined;
  const server: OwnServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        { stdio: 'ignore' },
      );
      await waitFor(() => accepts(port), `redis-server on ${port}`);
    },
    async kill() {
      if (!child || child.exitCode !== null) return;
      const c = child;
      c.kill('SIGCONT');
      c.kill('SIGKILL');
      await once(c, 'exit');
    },
    freeze() {
      child?.kill('SIGSTOP');
    },
    thaw() {
      child?.kill('SIGCONT');
    },
    async stop() {
      await server.kill();
    },
  };
  await server.start();
  return server;
}

function pgBin(name: string): string {
  const root = '/usr/lib/postgresql';
  const version = existsSync(root) ? readdirSync(root).sort().pop() : undefined;
  return version ? path.join(root, version, 'bin', name) : name;
}

const asRoot = process.getuid?.() === 0;
function pgUser(): { uid: number; gid: number } | undefined {
  if (!asRoot) return undefined;
  const r = spawnSync('id', ['-u', 'postgres']);
  const g = spawnSync('id', ['-g', 'postgres']);
  return { uid: Number(String(r.stdout).trim()), gid: Number(String(g.stdout).trim()) };
}

/** A PostgreSQL cluster of its own (trust authentication, database `postgres`). */
export async function startOwnPostgres(): Promise<OwnServer> {
  const port = await closedPort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'trackgate-pg-'));
  const data = path.join(dir, 'data');
  const user = pgUser();
  if (user) chownSync(dir, user.uid, user.gid);
  const spawnOpts = { stdio: 'ignore' as const, ...(user ? { uid: user.uid, gid: user.gid } : {}) };
  const init = spawnSync(pgBin('initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync'], spawnOpts);
  if (init.status !== 0) throw new Error(`initdb failed (${init.status})`);
  let child: ChildProcess | undefined;
  const server: OwnServer = {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      child = spawn(
        pgBin('postgres'),
        ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'],
        spawnOpts,
      );
      await waitFor(() => accepts(port), `postgres on ${port}`);
      // accepting connections comes a little after the port opens
      await waitFor(
        async () => spawnSync(pgBin('pg_isready'), ['-h', '127.0.0.1', '-p', String(port)]).status === 0,
        `postgres on ${port} ready`,
      );
    },
    async kill() {
      if (!child || child.exitCode !== null) return;
      const c = child;
      server.thaw();
      c.kill('SIGQUIT'); // immediate shutdown
      await once(c, 'exit');
    },
    // the postmaster and every backend it forked: open connections hang too, as on a stalled host
    freeze() {
      if (!child?.pid) return;
      child.kill('SIGSTOP');
      spawnSync('pkill', ['-STOP', '-P', String(child.pid)]);
    },
    thaw() {
      if (!child?.pid) return;
      spawnSync('pkill', ['-CONT', '-P', String(child.pid)]);
      child.kill('SIGCONT');
    },
    async stop() {
      await server.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
