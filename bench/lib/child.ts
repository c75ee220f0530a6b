/**
 * Benchmark helpers run in their own processes (load generators, baselines), so nothing shares
 * the event loop of the server under test. Parent: `startChild(entry)` then `call(cmd, args)`;
 * child: `serveCommands({cmd: handler})`. Messages go over the IPC channel; every child is started
 * through bash with the open-file limit raised to the hard limit.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** `bash -c 'ulimit -n …; exec node --import=tsx <entry> …'`: node replaces bash, so `pid` is node's. */
export function spawnNode(
  entry: string,
  args: string[],
  options: {
    env?: NodeJS.ProcessEnv;
    stdio?: ('ignore' | 'inherit' | 'pipe' | 'ipc')[];
    nodeArgs?: string[];
    cpus?: string;
    tsx?: boolean;
  } = {},
): ChildProcess {
  const pin = options.cpus && /^[0-9,-]+$/.test(options.cpus) && hasTaskset() ? `taskset -c ${options.cpus} ` : '';
  const script = `ulimit -n 65535 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec ${pin}"$0" "$@"`;
  return spawn(
    'bash',
    [
      '-c',
      script,
      process.execPath,
      ...(options.nodeArgs ?? []),
      ...(options.tsx === false ? [] : ['--import=tsx']),
      entry,
      ...args,
    ],
    {
      cwd: ROOT,
      env: options.env ?? process.env,
      stdio: options.stdio ?? ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
}

/** SIGTERM, then SIGKILL if the process has not exited (`exit`) within `graceMs`. */
export async function terminate(proc: ChildProcess, exit: Promise<void>, graceMs: number): Promise<void> {
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
  await exit;
  clearTimeout(timer);
}

let taskset: boolean | undefined;
/** `taskset` (util-linux) pins a process to CPUs; without it, processes run where the kernel puts them. */
function hasTaskset(): boolean {
  taskset ??= spawnSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' }).status === 0;
  return taskset;
}

export interface Child {
  pid: number;
  call<T = unknown>(cmd: string, args?: unknown): Promise<T>;
  stop(): Promise<void>;
}

type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string } | { ready: true };

/** Starts `bench/lib/<file>` in its own process and resolves once it reports ready. */
export async function startChild(file: string, env?: NodeJS.ProcessEnv, cpus?: string): Promise<Child> {
  const proc = spawnNode(path.join(ROOT, 'bench/lib', file), [], { env, cpus });
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let next = 1;
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    proc.once('exit', (code, signal) => {
      exited = true;
      for (const w of waiting.values()) w.reject(new Error(`${file} exited (${code ?? signal}) before answering`));
      waiting.clear();
      resolve();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    proc.once('error', reject);
    proc.once('exit', (code) => reject(new Error(`${file} exited (${code}) before it was ready`)));
    proc.on('message', (m: Reply) => {
      if ('ready' in m) return resolve();
      const w = waiting.get(m.id);
      if (!w) return;
      waiting.delete(m.id);
      if (m.ok) w.resolve(m.result);
      else w.reject(new Error(`${file}: ${m.error}`));
    });
  });
  return {
    pid: proc.pid!,
    call<T>(cmd: string, args?: unknown): Promise<T> {
      if (exited) return Promise.reject(new Error(`${file} has exited`));
      const id = next++;
      return new Promise<T>((resolve, reject) => {
        waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
        proc.send({ id, cmd, args });
      });
    },
    async stop() {
      if (!exited) await terminate(proc, exit, 5000);
    },
  };
}

/** Child side: answers the parent's commands; exits when the parent goes away. */
export function serveCommands(handlers: Record<string, (args: any) => unknown>): void {
  process.on('message', async (m: { id: number; cmd: string; args: unknown }) => {
    try {
      const handler = handlers[m.cmd];
      if (!handler) throw new Error(`unknown command ${m.cmd}`);
      const result = await handler(m.args);
      process.send!({ id: m.id, ok: true, result });
    } catch (e) {
      process.send!({ id: m.id, ok: false, error: (e as Error).stack ?? String(e) });
    }
  });
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
  process.send!({ ready: true });
}

/** The processes `pid` started (trackgate's gateway processes), from /proc. */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Resident and peak resident memory of a process, from /proc/<pid>/status (kB). */
export async function memoryOf(pid: number): Promise<{ rssKb: number; hwmKb: number }> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssKb: kb('VmRSS'), hwmKb: kb('VmHWM') };
}

/** CPU time (user + system, ms) in the text of a /proc/<pid>/stat file. */
export function cpuMsInStat(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[11] utime, fields[12] stime (clock ticks; 100 per second on Linux)
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** CPU time (user + system, ms) a process has used, from /proc/<pid>/stat. */
export async function cpuMsOf(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  return cpuMsInStat(await readFile(`/proc/${pid}/stat`, 'utf8'));
}

/** cpuMsOf, read synchronously so that it lines up with the edges of a measured window. */
export function cpuMsOfSync(pid: number): number {
  return cpuMsInStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/**
 * CPU time (ms) every CPU of the machine spent busy (user, nice, system, irq, softirq, steal:
 * all but idle and I/O wait), from /proc/stat, read synchronously so it lines up with a window.
 */
export function machineBusyMs(): number {
  const first = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  const [user, nice, system, , , irq, softirq, steal] = first.trim().split(/\s+/).slice(1).map(Number);
  return ((user + nice + system + irq + softirq + (steal || 0)) * 1000) / 100;
}

/** CPU time (ms) of every running process named `comm` (e.g. `postgres`: the server and its backends), from /proc. */
export function cpuMsOfNamed(comm: string): number {
  let ms = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === comm) ms += cpuMsInStat(stat);
    } catch {
      // gone meanwhile
    }
  }
  return ms;
}
