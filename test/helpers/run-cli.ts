/**
 * Runs the trackgate command (`cli.ts` under tsx) to its end without blocking this process. The
 * tests of a file run side by side in one process, many with a trackgate server in it: a
 * synchronous spawn held their event loop for as long as the command took (seconds under tsx on a
 * loaded machine), long enough for a server's database-connection wait (10 s) to give up.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { PATIENCE_MS } from './wait.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface CliRun {
  /** the exit code; null when it was killed (timeout) */
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `args` after `cli.ts`; `env` over this process's environment; killed after `timeoutMs` (several commands side by side take longer). */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  { timeoutMs = PATIENCE_MS }: { timeoutMs?: number } = {},
): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import=tsx', 'cli.ts', ...args],
      { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8', timeout: timeoutMs },
      (err, stdout, stderr) => {
        const code = (err as { code?: unknown } | null)?.code;
        resolve({ status: err ? (typeof code === 'number' ? code : null) : 0, stdout, stderr });
      },
    );
  });
}
