/** Result tables on stdout and the machine a run happened on. */
import os from 'node:os';

export interface Machine {
  date: string;
  node: string;
  cpus: number;
  cpuModel: string;
  memoryGb: number;
  /** 1, 5 and 15 min load averages when the benchmark started (other work on the machine) */
  loadAverage: number[];
}

export function machine(): Machine {
  const cpus = os.cpus();
  return {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

export function printTable(title: string, header: string[], rows: (string | number)[][]): void {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]): string =>
    r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(`\n${title}`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of cells.slice(1)) console.log(line(r));
}

export const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
export const pct = (ratio: number): string => `${(ratio * 100).toFixed(1)} %`;

export function log(message: string): void {
  console.log(`[${new Date().toISOString().slice(11, 19)}] ${message}`);
}

/** Shorter runs for trying the benchmarks out (BENCH_QUICK=1); recorded figures never use it. */
export const QUICK = process.env.BENCH_QUICK === '1';

/** µs of CPU per item from a CPU share (% of one core) and items per second. */
export const cpuUsPer = (cpuPct: number, perSec: number): number => (cpuPct * 1e4) / perSec;
