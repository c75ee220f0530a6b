import type { ExecutionContext } from 'ava';
import { ProtocolError, type ProtocolModule } from '../../protocols/types.js';

/** mulberry32: a small deterministic PRNG, so a fuzz failure reproduces from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Runs `run`: undefined when it returns or throws a ProtocolError, else what it threw (a decoder bug). */
export function onlyProtocolErrors(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (e) {
    return e instanceof ProtocolError ? undefined : String((e as Error)?.stack ?? e);
  }
}

export interface SplitterFuzz {
  protocol: ProtocolModule;
  rand: () => number;
  rounds: number;
  /** the bytes of round `i` (a mutated real frame, say) */
  input: (i: number) => Buffer;
  decode: (frame: Buffer) => unknown;
  /** how a failing frame is shown */
  show: (frame: Buffer) => string;
}

/**
 * Feeds every round's bytes to one splitter in random pieces of 1-64 bytes: the splitter stays
 * within the protocol's largest frame, and each frame it cuts decodes or throws ProtocolError.
 */
export function fuzzSplitter(t: ExecutionContext, o: SplitterFuzz): void {
  const max = o.protocol.maxFrameBytes;
  const s = o.protocol.createSplitter!();
  for (let i = 0; i < o.rounds; i++) {
    const data = o.input(i);
    for (let off = 0; off < data.length; ) {
      const n = 1 + Math.floor(o.rand() * 64);
      const frames = s.push(data.subarray(off, off + n));
      off += n;
      t.true(s.buffered <= max, 'bounded buffer');
      for (const f of frames) {
        t.true(f.length <= max);
        const problem = onlyProtocolErrors(() => o.decode(f));
        if (problem) return t.fail(`frame ${o.show(f)}: ${problem}`);
      }
    }
  }
}
