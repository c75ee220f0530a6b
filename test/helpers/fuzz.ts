import type { ExecutionContext } from 'ava';
import { ProtocolError, type DecodeResult, type ProtocolModule } from '../../protocols/types.js';

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

/**
 * One to four random edits of a frame: bits flipped, cut and ended with `ending`, a byte replaced
 * by one of `specials` (the protocol's delimiters), random bytes appended, a byte dropped.
 */
export function mutateBytes(
  rand: () => number,
  input: Buffer,
  o: { ending: string; specials: readonly number[] },
): Buffer {
  const int = (n: number) => Math.floor(rand() * n);
  let b = Buffer.from(input);
  for (let r = 0; r < 1 + int(4); r++) {
    switch (int(5)) {
      case 0:
        for (let i = 0; i < 1 + int(4) && b.length; i++) b[int(b.length)] ^= 1 << int(8);
        break;
      case 1:
        b = Buffer.concat([b.subarray(0, int(b.length + 1)), Buffer.from(o.ending)]);
        break;
      case 2:
        if (b.length) b[int(b.length)] = o.specials[int(o.specials.length)];
        break;
      case 3:
        b = Buffer.concat([b, Buffer.from(Array.from({ length: int(32) }, () => int(256)))]);
        break;
      default:
        if (b.length) {
          const at = int(b.length);
          b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1)]);
        }
    }
  }
  return b;
}

/** Like onlyProtocolErrors for a decode, which must also give only coordinates in range and valid dates. */
export function decodesSanely(decode: () => DecodeResult): string | undefined {
  return onlyProtocolErrors(() => {
    for (const m of decode().messages) {
      const l = m.location;
      if (l && !(Math.abs(l.latitudeDeg) <= 90 && Math.abs(l.longitudeDeg) <= 180))
        throw new Error('coordinates out of range');
      if (m.fixTime && Number.isNaN(m.fixTime.getTime())) throw new Error('invalid date');
    }
  });
}
