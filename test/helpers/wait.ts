/** Waiting in tests that watch real servers: poll until a condition holds, or bound a call's time. */

/**
 * How long a test waits for something that must happen. Minutes, not seconds: the suite must pass
 * while another `npm test` keeps both cores busy, and there a start-up or a round trip that takes
 * 200 ms alone took 20-30 s; with two suites and builds beside them (a load of 30 on 2 cores) one
 * `trackgate` command under tsx took over 2 minutes. A condition that never comes still fails the
 * test, only later. Every helper's default deadline is this; a test passes a shorter one only
 * where the wait itself is what it checks.
 */
export const PATIENCE_MS = 300_000;

/** Polls `check` every `everyMs` until it holds; throws naming `what` after `timeoutMs`. */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = PATIENCE_MS,
  everyMs = 50,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

/** Runs `run`, which must settle within `ms`; resolves with its value and how long it took. */
export async function timed<T>(ms: number, what: string, run: () => Promise<T>): Promise<{ value: T; took: number }> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const value = await Promise.race([
    run(),
    new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)),
    ),
  ]).finally(() => clearTimeout(timer));
  return { value, took: Date.now() - started };
}

/**
 * The CPU time (user + system, ms) this process has spent since `before` (a `process.cpuUsage()`).
 * A bound on how much work something is (a pathological input must not cost seconds) holds on a
 * busy machine, where the wall-clock time of the same work grows with every other process on the cores.
 */
export function cpuMsSince(before: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}
