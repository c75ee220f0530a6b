/**
 * The one process-exit handler of trackgate's processes (the core's `serve`, a gateway process, an
 * edge gateway): signals stop cleanly, within STOP_TIMEOUT_MS, and the process policy on bugs.
 *
 * An unhandled promise rejection is a bug in one request or connection; it is logged at error with
 * its stack and the process keeps running (every other tracker and client carries on). An uncaught
 * exception may have left state half-changed, so, as Node.js advises, the process logs it and
 * exits with 1 for its supervisor (Docker `--restart`, systemd `Restart=`, the core for its
 * gateway processes) to start it again: the core stops cleanly first (what was acknowledged is
 * already stored).
 */
import type { Logger } from '../core/logger.js';
import { bindProblem, ConfigError, type Config } from '../config/config.js';

/** how long stopping may take before the process exits anyway */
export const STOP_TIMEOUT_MS = 10_000;

export interface ProcessExitOptions {
  logger: Logger;
  /** what runs (awaited: the core's start-up may still be under way), stopped on a signal */
  running(): Promise<{ stop(): Promise<void> } | undefined> | { stop(): Promise<void> } | undefined;
  /** the error lines' words for the two kinds of bug */
  lines: { rejection: string; uncaught: string };
  /** an uncaught exception: stop cleanly, then exit 1 (the core), or exit 1 at once (a gateway process) */
  uncaught: 'stop' | 'exit';
  /** 'stopping' and 'stopped' lines (the core's) */
  announce?: boolean;
  /** the signals that stop the process; the others of SIGINT, SIGTERM and SIGHUP are ignored (a gateway process of the core: the core stops it) */
  signals: NodeJS.Signals[];
}

/** Installs the handlers; `stopping()` says whether a stop has begun. */
export function handleProcessExit(o: ProcessExitOptions): { stopping(): boolean } {
  let stopping = false;
  const stop = async (why: Record<string, unknown>, exitCode: number) => {
    if (stopping) return;
    stopping = true;
    if (o.announce) o.logger.info(why, 'stopping');
    // A signal during start-up waits for it to finish, then stops what it started: exiting at once
    // left the gateway processes it had forked half started, each failing on its closed channel.
    // The start-up's own steps are bounded (the database's connection wait, the gateway processes'
    // START_TIMEOUT_MS); the stop's time starts after it, so a start-up slow on a busy machine does
    // not use it up and exit before the gateway processes are stopped.
    const running = await o.running();
    setTimeout(() => process.exit(exitCode), STOP_TIMEOUT_MS).unref();
    await running?.stop().catch((e: unknown) => o.logger.error({ err: e }, 'stopping failed'));
    if (o.announce) o.logger.info({ exitCode }, 'stopped');
    process.exit(exitCode);
  };
  process.on('unhandledRejection', (reason) => o.logger.error({ err: reason }, o.lines.rejection));
  process.on('uncaughtException', (err, origin) => {
    o.logger.error({ err, origin }, o.lines.uncaught);
    if (o.uncaught === 'exit') process.exit(1);
    void stop({ reason: 'uncaught exception' }, 1);
  });
  // SIGHUP: a closed terminal or an ssh session ending, or a `kill -HUP` meant to rotate logs (trackgate
  // writes them to standard output, nothing to reopen): a clean stop, as SIGTERM, not Node's
  // default of dying on the spot without a line
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, o.signals.includes(signal) ? () => void stop({ signal }, 0) : () => undefined);
  }
  return { stopping: () => stopping };
}

/** A start that cannot go on: one line naming the cause, exit 78 for configuration (EX_CONFIG), else 1. */
export function exitOnStartError(e: unknown, config?: Readonly<Config>): never {
  if (e instanceof ConfigError) {
    process.stderr.write(`trackgate: configuration error: ${e.message}\n`);
    process.exit(78);
  }
  process.stderr.write(`trackgate: could not start: ${(config && bindProblem(e, config)) ?? (e as Error).message}\n`);
  process.exit(1);
}
