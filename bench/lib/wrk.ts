/**
 * wrk (Debian's package) as the HTTP load generator: a C client that loads a Node server harder
 * than a Node client can, so a ratio against a bare Koa route is not capped by the generator.
 * Returns the same LoadResult as the autocannon child; its CPU is wrk's own, read from the
 * kernel's accounting of the child.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LoadResult } from './autocannon-child.js';

export interface WrkTarget {
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

/** Whether wrk is on the PATH. */
export function hasWrk(): boolean {
  return spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;
}

const luaString = (s: string): string => JSON.stringify(s);

/** The script wrk runs: method, headers, body, and a report of the status counts and latency percentiles. */
function script(t: WrkTarget): string {
  const lines = [`wrk.method = ${luaString(t.method)}`];
  for (const [k, v] of Object.entries(t.headers ?? {})) lines.push(`wrk.headers[${luaString(k)}] = ${luaString(v)}`);
  if (t.body !== undefined) lines.push(`wrk.body = ${luaString(t.body)}`);
  lines.push(
    'done = function(summary, latency, requests)',
    '  io.write(string.format("TGRESULT %d %d %d %d %f %f\\n", summary.requests, summary.errors.status,',
    '    summary.errors.connect + summary.errors.read + summary.errors.write, summary.errors.timeout,',
    '    latency:percentile(50) / 1000, latency:percentile(99) / 1000))',
    'end',
  );
  return `${lines.join('\n')}\n`;
}

/** One wrk run of `durationS` with `connections` over one thread, pinned to `cpus` when given. */
export async function runWrk(
  t: WrkTarget,
  o: { connections: number; durationS: number; cpus?: string },
): Promise<LoadResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tg-wrk-'));
  const file = path.join(dir, 'load.lua');
  writeFileSync(file, script(t));
  const args = ['-t1', `-c${o.connections}`, `-d${o.durationS}s`, '--timeout', '10s', '-s', file, t.url];
  const wrk = [...(o.cpus ? ['taskset', '-c', o.cpus] : []), 'wrk', ...args].map(
    (a) => `'${a.replace(/'/g, "'\\''")}'`,
  );
  // the shell's cutime and cstime (fields 16, 17 of its stat, in clock ticks of 10 ms) are wrk's CPU once waited for
  const shell = `${wrk.join(' ')} && echo "TGCPU $(cut -d' ' -f16,17 /proc/$$/stat)"`;
  try {
    const { out, cpuMs, seconds } = await new Promise<{ out: string; cpuMs: number; seconds: number }>(
      (resolve, reject) => {
        const t0 = performance.now();
        const child = spawn('sh', ['-c', shell], { stdio: ['ignore', 'pipe', 'inherit'] });
        let text = '';
        child.stdout.on('data', (c: Buffer) => {
          text += c.toString();
        });
        child.once('error', reject);
        child.once('exit', (code) => {
          if (code !== 0) return reject(new Error(`wrk exited ${code}:\n${text}`));
          const m = /TGCPU (\d+) (\d+)/.exec(text);
          const cpuMs = m ? (Number(m[1]) + Number(m[2])) * 10 : Number.NaN;
          resolve({ out: text, cpuMs, seconds: (performance.now() - t0) / 1000 });
        });
      },
    );
    const m = /TGRESULT (\d+) (\d+) (\d+) (\d+) ([\d.]+) ([\d.]+)/.exec(out);
    const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
    if (!m || !rps) throw new Error(`wrk printed no result:\n${out}`);
    return {
      requestsPerSec: Number(rps[1]),
      total: Number(m[1]),
      non2xx: Number(m[2]),
      errors: Number(m[3]),
      timeouts: Number(m[4]),
      latencyP50Ms: Number(Number(m[5]).toFixed(2)),
      latencyP99Ms: Number(Number(m[6]).toFixed(2)),
      generatorCpuPct: cpuMs / 10 / seconds,
      seconds,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
