/**
 * CPU time per message (BENCHMARKS.md "Method"): what every ingest and delivery benchmark reports
 * beside its rates. trackgate's figure is the CPU of all its processes (the server and every process
 * below it: the gateway processes) read from /proc at the start and the end of the measured window,
 * over the messages acknowledged in that window; the baseline's is measured in the same run. Rounds
 * alternate, and the lowest cost of each side is the one compared.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { fmt, printTable } from './report.js';

/** The fields of a /proc/<pid>/stat text after the command name (field 3, the state, first). */
function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/**
 * CPU time (ms) in a /proc/<pid>/stat text: utime + stime, and with `reaped` also cutime + cstime
 * (what its children that have exited and been waited for used), in clock ticks of 1/100 s.
 */
function cpuMsOfStat(stat: string, reaped: boolean): number {
  const f = statFields(stat);
  const ticks = Number(f[11]) + Number(f[12]) + (reaped ? Number(f[13]) + Number(f[14]) : 0);
  return (ticks * 1000) / 100;
}

/** Every process's parent, from one pass over /proc. */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      out.set(Number(name), Number(statFields(readFileSync(`/proc/${name}/stat`, 'utf8'))[1]));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** `pid` and every process below it (children, their children, …), from /proc. */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const [child, parent] of parents()) {
    const list = children.get(parent);
    if (list) list.push(child);
    else children.set(parent, [child]);
  }
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i]) ?? []));
  return out;
}

/**
 * CPU time (ms, user + system) of `pid` and every process below it, read synchronously so that it
 * lines up with a window's edges. A process that exits meanwhile is still counted: its time moves
 * into its parent's cutime and cstime, counted here too, once the parent has waited for it (Node does).
 */
export function treeCpuMs(pid: number): number {
  let ms = 0;
  for (const p of processTree(pid)) {
    try {
      ms += cpuMsOfStat(readFileSync(`/proc/${p}/stat`, 'utf8'), true);
    } catch {
      // gone meanwhile
    }
  }
  return ms;
}

/** CPU time (ms) of `pid` alone (user + system), read synchronously. */
export function ownCpuMs(pid: number): number {
  return cpuMsOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'), false);
}

/** µs of CPU per message: `cpuMs` over `messages` (NaN without messages). */
export const usPer = (cpuMs: number, messages: number): number => (messages > 0 ? (cpuMs * 1000) / messages : NaN);

/** µs of CPU per message from a CPU share (% of one core) held for `seconds` while `messages` were acknowledged. */
export const usPerFromPct = (cpuPct: number | undefined, seconds: number, messages: number): number =>
  cpuPct === undefined ? NaN : usPer((cpuPct / 100) * seconds * 1000, messages);

/** One party's cost: µs of CPU per message, the lowest of its rounds, and every round's. */
export interface CostFigure {
  /** whose CPU, per what */
  label: string;
  /** µs of CPU per message: the lowest of the rounds */
  us: number;
  /** every round's µs per message, in the order run */
  rounds: number[];
}

/** trackgate's cost per message against its baseline's, measured in the same run. */
export interface Cost {
  /** which comparison, where a benchmark has several (a database, a mode) */
  name?: string;
  /** what one message is: a position, an MQTT message, an alert */
  per: string;
  trackgate: CostFigure;
  baseline: CostFigure;
  /** trackgate.us / baseline.us */
  ratio: number;
  goal?: string;
  met?: boolean;
  /** more figures of the same run, beside them (information) */
  more?: CostFigure[];
}

/** A figure from its rounds' costs (NaN rounds, where a process could not be read, are left out of the best). */
export function figure(label: string, rounds: number[]): CostFigure {
  const finite = rounds.filter((r) => Number.isFinite(r));
  return { label, us: finite.length ? Math.min(...finite) : NaN, rounds };
}

/**
 * trackgate against its baseline; a goal as the most trackgate may cost, as a multiple of the
 * baseline (`maxRatio`) or in µs (`maxUs`).
 */
export function compareCost(
  per: string,
  trackgate: CostFigure,
  baseline: CostFigure,
  options: { name?: string; goal?: { text: string; maxRatio?: number; maxUs?: number }; more?: CostFigure[] } = {},
): Cost {
  const ratio = trackgate.us / baseline.us;
  const g = options.goal;
  return {
    ...(options.name !== undefined && { name: options.name }),
    per,
    trackgate,
    baseline,
    ratio,
    ...(g && {
      goal: g.text,
      met: (g.maxRatio === undefined || ratio <= g.maxRatio) && (g.maxUs === undefined || trackgate.us <= g.maxUs),
    }),
    ...(options.more?.length && { more: options.more }),
  };
}

export const fmtUs = (us: number): string =>
  !Number.isFinite(us) ? '?' : us >= 1000 ? fmt(us) : us.toFixed(Math.abs(us) < 10 ? 2 : 1);
const fmtRatio = (r: number): string => (Number.isFinite(r) ? `${r.toFixed(2)}×` : '?');

/** The "cost per message" table: for each comparison, trackgate, its baseline and any more figures. */
export function costTable(what: string, costs: Cost | Cost[]): void {
  const list = Array.isArray(costs) ? costs : [costs];
  const rows: string[][] = [];
  for (const c of list) {
    const prefix = c.name ? `${c.name}: ` : '';
    const rounds = (f: CostFigure): string => f.rounds.map(fmtUs).join(' / ');
    rows.push([
      prefix + c.trackgate.label,
      fmtUs(c.trackgate.us),
      rounds(c.trackgate),
      fmtRatio(c.ratio),
      c.goal ?? '',
      c.met === undefined ? '' : c.met ? 'yes' : 'NO',
    ]);
    rows.push([prefix + c.baseline.label, fmtUs(c.baseline.us), rounds(c.baseline), '1.00×', '', '']);
    for (const m of c.more ?? []) rows.push([`${prefix}  ${m.label}`, fmtUs(m.us), rounds(m), '', '', '']);
  }
  const per = [...new Set(list.map((c) => c.per))].join(', ');
  printTable(
    `cost per message, ${what}: µs of CPU per ${per} (trackgate: the server and all its processes, the measured window only); the lowest of each side's rounds`,
    ['measure', 'µs CPU (best)', 'rounds', 'ratio', 'goal', 'met'],
    rows,
  );
}
