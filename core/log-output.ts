/**
 * Where the JSON log lines go (main.ts and gateway-main.ts hand it to pino): standard output,
 * written in blocks (LOG_BLOCK_BYTES, at the latest every LOG_FLUSH_MS), because a login storm
 * would otherwise pay one write system call per line.
 * Logging never stops the process (docs/operations.md "Logs"): a reader that is gone (EPIPE) means
 * lines are dropped from then on; a slow reader (EAGAIN) gets at most LOG_MAX_WAITING_BYTES waiting,
 * then lines are dropped and counted; at exit, a reader that takes nothing delays it by at most
 * LOG_EXIT_WAIT_MS.
 */
import fs from 'node:fs';
import tty from 'node:tty';
import { LOG_BLOCK_BYTES, LOG_FLUSH_MS } from './logger.js';

/** lines waiting for a slow reader, at most (bytes) */
export const LOG_MAX_WAITING_BYTES = 16 * 1024 * 1024;
/** how long the exit waits, at most, for a reader that takes nothing */
export const LOG_EXIT_WAIT_MS = 1000;

export interface LogOutputOptions {
  /** the file descriptor written (default 1, standard output) */
  fd?: number;
  blockBytes?: number;
  maxWaitingBytes?: number;
  flushEveryMs?: number;
  /** what the line about dropped lines carries besides its message (the logger's base fields) */
  base?: Record<string, unknown>;
  /** `json` (default): the lines as pino makes them; `pretty`: one readable line each (prettyLine) */
  format?: LogFormat;
  /** pretty lines colour their level when the output is a terminal, unless false (NO_COLOR set) */
  colour?: boolean;
}

/** TRACKGATE_LOG_FORMAT */
export type LogFormat = 'json' | 'pretty';

const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};
/** ANSI colours of the level names, on a terminal only */
const LEVEL_COLOURS: Record<number, string> = { 10: '90', 20: '90', 30: '32', 40: '33', 50: '31', 60: '35' };
/** fields every line has, or that say nothing to a person at a terminal */
const UNSAID = new Set(['level', 'time', 'msg', 'service']);

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `2026-03-01 13:30:05.123`, in the process's time zone (TZ): the time a person at the terminal reads */
function localStamp(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** A field's value: a plain word as it is, anything else as JSON (so spaces and quotes stay readable). */
function fieldValue(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  return typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
}

/**
 * One JSON log line as a person reads it: local time, level, message, then `key=value` fields,
 * and an error's stack on the lines below, indented. `colour`: the level in ANSI colour.
 * A line that is not JSON is kept as it is.
 */
export function prettyLine(line: string, colour = false): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  if (typeof entry !== 'object' || entry === null) return line;
  const level = Number(entry.level);
  const name = (LEVEL_NAMES[level] ?? String(entry.level)).padEnd(5);
  const parts = [
    typeof entry.time === 'number' ? localStamp(entry.time) : '',
    colour && LEVEL_COLOURS[level] ? `\x1b[${LEVEL_COLOURS[level]}m${name}\x1b[0m` : name,
    String(entry.msg ?? ''),
  ];
  let stack = '';
  for (const [key, value] of Object.entries(entry)) {
    if (UNSAID.has(key)) continue;
    const err = value as { message?: unknown; stack?: unknown } | null;
    if (typeof err === 'object' && err !== null && typeof err.stack === 'string') {
      parts.push(`${key}=${fieldValue(err.message ?? '')}`);
      stack += `\n    ${err.stack.split('\n').join('\n    ')}`;
      continue;
    }
    parts.push(`${key}=${fieldValue(value)}`);
  }
  return `${parts.filter(Boolean).join(' ')}${stack}\n`;
}

/** The part of a pino destination trackgate uses: lines in, written in blocks. */
export class LogOutput {
  private readonly fd: number;
  private readonly blockBytes: number;
  private readonly maxWaitingBytes: number;
  private readonly base: Record<string, unknown>;
  /** each line made readable (TRACKGATE_LOG_FORMAT=pretty), coloured on a terminal, or undefined for JSON */
  private readonly pretty?: (line: string) => string;
  /** lines not yet handed to a write, and their length in UTF-16 units (close enough to bytes for a bound) */
  private lines: string[] = [];
  private waiting = 0;
  /** what a write left unwritten (a partial write, or one refused with EAGAIN): written first */
  private rest?: Buffer;
  private writing = false;
  private broken = false;
  private dropped = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly onExit = () => this.flushSync();

  constructor(o: LogOutputOptions = {}) {
    this.fd = o.fd ?? 1;
    this.blockBytes = o.blockBytes ?? LOG_BLOCK_BYTES;
    this.maxWaitingBytes = o.maxWaitingBytes ?? LOG_MAX_WAITING_BYTES;
    this.base = o.base ?? {};
    if (o.format === 'pretty') {
      const colour = o.colour !== false && tty.isatty(this.fd);
      this.pretty = (line) => prettyLine(line, colour);
    }
    this.timer = setInterval(() => this.flush(), o.flushEveryMs ?? LOG_FLUSH_MS).unref();
    process.on('exit', this.onExit);
  }

  /** One log line (pino calls it with the line and its newline). */
  write(made: string): boolean {
    if (this.broken) return true;
    const line = this.pretty ? this.pretty(made) : made;
    if (this.waiting + (this.rest?.length ?? 0) + line.length > this.maxWaitingBytes) {
      this.dropped++;
      return true;
    }
    this.lines.push(line);
    this.waiting += line.length;
    if (this.waiting >= this.blockBytes) this.flush();
    return true;
  }

  /** Hands what waits to one write, unless one is running (it flushes again when it ends). */
  flush(): void {
    if (this.writing || this.broken) return;
    const data = this.take();
    if (!data) return;
    this.writing = true;
    fs.write(this.fd, data, 0, data.length, null, (err, written) => {
      this.writing = false;
      if (err) return this.failed(err, data);
      if (written < data.length) this.rest = data.subarray(written);
      if (this.rest || this.waiting >= this.blockBytes) this.flush();
    });
  }

  /** Writes what waits before the process exits; gives up on a reader that is gone or takes nothing. */
  flushSync(): void {
    if (this.broken) return;
    let data = this.take();
    const until = performance.now() + LOG_EXIT_WAIT_MS;
    while (data?.length) {
      try {
        data = data.subarray(fs.writeSync(this.fd, data));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN' || performance.now() >= until)
          return this.failed(e as Error, undefined);
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
      }
    }
  }

  /** Stops writing (tests; a process that exits needs nothing of it). */
  close(): void {
    clearInterval(this.timer);
    process.off('exit', this.onExit);
  }

  /** What waits, as one buffer: the rest of the last write first, then a line about dropped lines, then the lines. */
  private take(): Buffer | undefined {
    if (!this.rest && this.lines.length === 0 && this.dropped === 0) return undefined;
    let text = '';
    if (this.dropped) {
      text = `${JSON.stringify({ level: 40, time: Date.now(), ...this.base, dropped: this.dropped, msg: 'log lines dropped: standard output did not take them in time' })}\n`;
      if (this.pretty) text = this.pretty(text);
      this.dropped = 0;
    }
    text += this.lines.join('');
    this.lines = [];
    this.waiting = 0;
    const rest = this.rest;
    this.rest = undefined;
    const data = Buffer.from(text);
    return rest ? Buffer.concat([rest, data]) : data;
  }

  private failed(err: Error, data: Buffer | undefined): void {
    if ((err as NodeJS.ErrnoException).code === 'EAGAIN' && data) {
      // the reader is slow: the same bytes again at the next flush
      this.rest = data;
      return;
    }
    this.broken = true;
    this.lines = [];
    this.waiting = 0;
    this.rest = undefined;
    try {
      fs.writeSync(2, `trackgate: log lines can no longer be written (${err.message}); they are dropped from now on\n`);
    } catch {
      // standard error is gone too
    }
  }
}
