/** A Logger that keeps every entry, so tests can count and read log lines (what pino would print). */
import type { Logger } from '../../core/logger.js';

export type Level = 'debug' | 'info' | 'warn' | 'error';

export interface Entry {
  level: Level;
  msg: string;
  [field: string]: unknown;
}

export interface CapturingLogger extends Logger {
  entries: Entry[];
  /** the entries at `level`, optionally only those with this message */
  at(level: Level, msg?: string | RegExp): Entry[];
  clear(): void;
}

export function capturingLogger(): CapturingLogger {
  const entries: Entry[] = [];
  const make = (bindings: Record<string, unknown>): Logger => {
    const write = (level: Level) => (obj: object | string, msg?: string) => {
      const fields = typeof obj === 'string' ? {} : obj;
      entries.push({ ...bindings, ...fields, level, msg: typeof obj === 'string' ? obj : (msg ?? '') });
    };
    return {
      debug: write('debug'),
      info: write('info'),
      warn: write('warn'),
      error: write('error'),
      child: (more) => make({ ...bindings, ...more }),
    };
  };
  const root = make({});
  return {
    ...root,
    entries,
    at(level, msg) {
      return entries.filter(
        (e) => e.level === level && (msg === undefined || (typeof msg === 'string' ? e.msg === msg : msg.test(e.msg))),
      );
    },
    clear() {
      entries.length = 0;
    },
  };
}
