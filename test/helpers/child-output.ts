/**
 * What a child process (a real trackgate) writes, read to its end. `ended` settles on 'close',
 * after both pipes reached their end: 'exit' may come while the last lines are still in the pipe,
 * and a test that read them then missed them on a busy machine ('stopped' logged but not seen).
 */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { PATIENCE_MS } from './wait.js';

export interface ChildOutput {
  /** every line of standard output so far */
  lines: string[];
  /** the lines that are JSON (log entries) */
  entries: Record<string, unknown>[];
  /** standard error so far */
  stderr(): string;
  /** exit code and signal, once the process exited and its output was read to the end */
  ended: Promise<[number | null, NodeJS.Signals | null]>;
  /** the first entry whose msg is (or matches) `msg`; undefined if the process ends, or `ms` passes, first */
  seen(msg: string | RegExp, ms?: number): Promise<Record<string, unknown> | undefined>;
}

/** `onEntry` sees each log entry as it is read (to signal the child at an exact point of its start). */
export function watchOutput(child: ChildProcess, onEntry?: (entry: Record<string, unknown>) => void): ChildOutput {
  const lines: string[] = [];
  const entries: Record<string, unknown>[] = [];
  let stderr = '';
  let done = false;
  const waiters: (() => void)[] = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  child.stderr?.on('data', (d) => (stderr += d));
  if (child.stdout) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        entries.push(entry);
        onEntry?.(entry);
      } catch {
        /* not JSON: kept in lines */
      }
      wake();
    });
  }
  const ended = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('close', (code, signal) => {
      done = true;
      wake();
      resolve([code, signal]);
    }),
  );
  const matches = (msg: string | RegExp) => (e: Record<string, unknown>) =>
    typeof msg === 'string' ? e.msg === msg : msg.test(String(e.msg));
  async function seen(msg: string | RegExp, ms = PATIENCE_MS): Promise<Record<string, unknown> | undefined> {
    const end = Date.now() + ms;
    for (;;) {
      const e = entries.find(matches(msg));
      if (e || done || Date.now() > end) return e;
      await new Promise<void>((r) => {
        const timer = setTimeout(r, Math.max(0, end - Date.now()));
        waiters.push(() => {
          clearTimeout(timer);
          r();
        });
      });
    }
  }
  return { lines, entries, stderr: () => stderr, ended, seen };
}
