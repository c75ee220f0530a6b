/** Waiting in tests that watch real servers: poll until a condition holds, or bound a call's time. */

/** Polls `check` every `everyMs` until it holds; throws naming `what` after `timeoutMs`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000, everyMs = 50): Promise<void> {
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
  const value = await Promise.race([run(), new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
  return { value, took: Date.now() - started };
}
