/**
 * What the benchmarks that compare trackgate with and without a feature share (rules-ingest,
 * forward-ingest): the Teltonika + GT06 tracker load of tcp-ingest's first version, and subject
 * and baseline run in alternating rounds, the best of each reported.
 */
import type { Child } from './child.js';
import { gt06Imei, teltonikaImei } from './frames.js';
import type { ConnectResult } from './tracker-generator.js';

/** The ids of `perProtocol` Teltonika and as many GT06 trackers. */
export function teltonikaGt06Ids(perProtocol: number): string[] {
  const ids: string[] = [];
  for (let i = 0; i < perProtocol; i++) ids.push(teltonikaImei(i), gt06Imei(i));
  return ids;
}

/** Logs in `perProtocol` Teltonika and as many GT06 trackers; every one must log in. */
export async function connectTeltonikaGt06(
  gen: Child,
  ports: { teltonika: number; gt06: number },
  perProtocol: number,
): Promise<ConnectResult> {
  const r = await gen.call<ConnectResult>('connect', {
    host: '127.0.0.1',
    ports,
    teltonika: { first: 0, count: perProtocol },
    gt06: { first: 0, count: perProtocol },
    batch: 250,
  });
  if (r.failed > 0) throw new Error(`${r.failed} trackers could not log in: ${r.firstError}`);
  return r;
}

/**
 * Runs the baseline and the subject `rounds` times each, alternating which goes first (so a trend
 * in the machine's speed favours neither), and `afterRound` (another measure of the same round)
 * after each pair: every round's result, in the order run.
 */
export async function alternatingRounds<V extends string, R>(
  baseline: V,
  subject: V,
  rounds: number,
  once: (variant: V) => Promise<R>,
  afterRound?: () => Promise<void>,
): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < rounds; i++) {
    for (const v of i % 2 === 0 ? [baseline, subject] : [subject, baseline]) results.push(await once(v));
    await afterRound?.();
  }
  return results;
}

/** The item (a round, a run) with the highest `pick`; the first of equals. */
export function bestRound<R>(items: readonly R[], pick: (r: R) => number): R {
  return items.reduce((a, b) => (pick(b) > pick(a) ? b : a));
}

/** The best value of `pick` over the rounds of one variant. */
export function bestOf<R extends { variant: string }>(
  rounds: R[],
  variant: R['variant'],
  pick: (r: R) => number,
): number {
  return pick(
    bestRound(
      rounds.filter((r) => r.variant === variant),
      pick,
    ),
  );
}
