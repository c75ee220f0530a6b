import test from 'ava';
import { cpuMsSince } from '../../helpers/wait.js';
import { tk103Protocol } from '../../../protocols/tk103/tk103.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { fuzzSplitter, onlyProtocolErrors, prng } from '../../helpers/fuzz.js';

const real = loadVectors('tk103')
  .filter((v) => v.test_kind === 'decoder')
  .map(frameBytes);
const ALPHABET = Buffer.from('0123456789ABCDEF,.()$:*{}NSEWAVLBPRZCDW \r\n');

function mutate(rand: () => number, src: Buffer): Buffer {
  const b = Buffer.from(src);
  const int = (n: number): number => Math.floor(rand() * n);
  switch (int(6)) {
    case 0:
      for (let i = 0, n = 1 + int(8); i < n && b.length; i++) b[int(b.length)] ^= 1 << int(8);
      return b;
    case 1:
      return b.subarray(0, int(b.length + 1));
    case 2:
      for (let i = 0, n = 1 + int(6); i < n && b.length; i++) b[int(b.length)] = ALPHABET[int(ALPHABET.length)];
      return b;
    case 3:
      return Buffer.concat([b.subarray(0, int(b.length)), real[int(real.length)]]);
    case 4:
      return Buffer.concat([
        Buffer.from('(013612345678BS50'),
        Buffer.from(Array.from({ length: int(200) }, () => ALPHABET[int(ALPHABET.length)])),
        Buffer.from(')'),
      ]);
    default:
      return Buffer.from(Array.from({ length: int(300) }, () => int(256)));
  }
}

const ctx: DecodeContext = { now: new Date(Date.UTC(2024, 0, 1)), transport: 'tcp', checksum: 'accept', session: {} };

test('tk103.fuzz: the decoder throws nothing but ProtocolError on mutated and random sentences', (t) => {
  const rand = prng(0x103103);
  const started = process.cpuUsage();
  for (let i = 0; i < 8000; i++) {
    const input = mutate(rand, real[i % real.length]);
    const problem = onlyProtocolErrors(() => tk103Protocol.decode!(input, ctx));
    if (problem) return t.fail(`input ${JSON.stringify(input.toString('latin1'))}: ${problem}`);
  }
  t.true(cpuMsSince(started) < 20_000, 'finishes quickly');
});

test('tk103.fuzz: a hostile position sentence does not backtrack for long', (t) => {
  const started = process.cpuUsage();
  const hostile = '(013612345678BR00' + '1'.repeat(500) + 'A' + ' '.repeat(400) + '1.1N';
  onlyProtocolErrors(() => tk103Protocol.decode!(Buffer.from(hostile), ctx));
  t.true(cpuMsSince(started) < 2_000);
});

test('tk103.fuzz: the splitter stays bounded and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(103);
  const started = process.cpuUsage();
  fuzzSplitter(t, {
    protocol: tk103Protocol,
    rand,
    rounds: 4000,
    input: (i) => mutate(rand, real[i % real.length]),
    decode: (f) => tk103Protocol.decode!(f, ctx),
    show: (f) => JSON.stringify(f.toString('latin1')),
  });
  t.true(cpuMsSince(started) < 30_000, 'finishes quickly');
});
