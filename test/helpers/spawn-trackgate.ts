/**
 * A real trackgate (`node --import=tsx main.ts`) in a process of its own, for tests that kill it
 * (SIGKILL) or its gateway processes: resolves with its ports once it logs `listening`, and with
 * its gateway processes' pids when it starts some.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** `nofile`: the process's limit on open files (soft and hard, set with util-linux prlimit, which then runs node in its place). */
export function spawnTrackgate(
  env: Record<string, string>,
  options: { detached?: boolean; lines?: string[]; nofile?: number } = {},
): Promise<{ child: ChildProcess; ports: Record<string, number>; gateways: number[] }> {
  const node = [process.execPath, '--import=tsx', 'main.ts'];
  const [command, ...args] = options.nofile
    ? ['prlimit', `--nofile=${options.nofile}:${options.nofile}`, ...node]
    : node;
  const child = spawn(command!, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: options.detached,
  });
  return new Promise((resolve, reject) => {
    let gateways: number[] = [];
    createInterface({ input: child.stdout! }).on('line', (line) => {
      options.lines?.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; ports?: Record<string, number>; pids?: number[] };
        if (entry.msg === 'gateway processes listening' && entry.pids) gateways = entry.pids;
        if (entry.msg === 'listening' && entry.ports) resolve({ child, ports: entry.ports, gateways });
      } catch {
        /* not a log line */
      }
    });
    child.once('exit', (code) => reject(new Error(`trackgate exited with ${code} before listening`)));
  });
}
