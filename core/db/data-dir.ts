/**
 * Creating the data directory. Not `mkdirSync(dir, { recursive: true })`: on Node 20 it spins for
 * ever, synchronously (100 % CPU, deaf to SIGTERM, nothing logged), when the kernel answers ENOENT
 * for a directory whose parent exists, as /proc and /sys do (`TRACKGATE_DATA_DIR=/proc/trackgate`).
 */
import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';

const code = (e: unknown): string | undefined => (e as NodeJS.ErrnoException).code;

/** Makes `dir` and its missing parents; throws the first refusal, with the directory it names. */
export function makeDataDir(dir: string): void {
  try {
    mkdirSync(dir);
    return;
  } catch (e) {
    if (code(e) === 'EEXIST' && statSync(dir).isDirectory()) return;
    const parent = path.dirname(dir);
    if (code(e) !== 'ENOENT' || parent === dir) throw e;
    makeDataDir(parent);
  }
  // the parent exists now: a second refusal is final
  mkdirSync(dir);
}
