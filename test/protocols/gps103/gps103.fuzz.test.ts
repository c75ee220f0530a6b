import test from 'ava';
import { cpuMsSince } from '../../helpers/wait.js';
import { gps103Protocol } from '../../../protocols/gps103/gps103.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { fuzzSplitter, onlyProtocolErrors, prng } from '../../helpers/fuzz.js';

const real = loadVectors('gps103')
  .filter((v) => v.test_kind === 'decoder')
  .map(frameBytes);
const ALPHABET = Buffer.from('0123456789,.;*:ABEFLNSVWimeOBDvtr-+% \r\n');

function mutate(rand: () => number, src: Buffer): Buffer {
  const b = Buffer.from(src);
  const int = (n: number): number => Math.floor(rand() * n);
  switch (int(6)) {
    case 0: // bit flips
      for (let i = 0, n = 1 + int(8); i < n && b.length; i++) b[int(b.length)] ^= 1 << int(8);
      return b;
    case 1: // truncation
      return b.subarray(0, int(b.length + 1));
    case 2: // protocol characters swapped in
      for (let i = 0, n = 1 + int(6); i < n && b.length; i++) b[int(b.length)] = ALPHABET[int(ALPHABET.length)];
      return b;
    case 3: // a real sentence spliced into another
      return Buffer.concat([b.subarray(0, int(b.length)), real[int(real.length)]]);
    case 4: // random protocol characters
      return Buffer.from(Array.from({ length: int(200) }, () => ALPHABET[int(ALPHABET.length)]));
    default: // random bytes
      return Buffer.from(Array.from({ length: int(300) }, () => int(256)));
  }
}

const ctx: DecodeContext = { now: new Date(Date.UTC(2024, 0, 1)), transport: 'tcp', checksum: 'accept', session: {} };

test('gps103.fuzz: the decoder throws nothing but ProtocolError on mutated and random sentences', (t) => {
  const rand = prng(0x103);
  const started = process.cpuUsage();
  for (let i = 0; i < 8000; i++) {
    const input = mutate(rand, real[i % real.length]);
    const problem = onlyProtocolErrors(() => gps103Protocol.decode!(input, ctx));
    if (problem) return t.fail(`input ${JSON.stringify(input.toString('latin1'))}: ${problem}`);
  }
  t.true(cpuMsSince(started) < 20_000, 'finishes quickly');
});

test('gps103.fuzz: a hostile alternative report does not backtrack for long', (t) => {
  const started = process.cpuUsage();
  const hostile = 'imei:1,' + 'a,'.repeat(700) + '-'.repeat(600) + '*';
  onlyProtocolErrors(() => gps103Protocol.decode!(Buffer.from(hostile), ctx));
  t.true(cpuMsSince(started) < 2_000);
});

test('gps103.fuzz: the splitter stays bounded and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(7);
  const started = process.cpuUsage();
  fuzzSplitter(t, {
    protocol: gps103Protocol,
    rand,
    rounds: 4000,
    input: (i) => mutate(rand, real[i % real.length]),
    decode: (f) => gps103Protocol.decode!(f, ctx),
    show: (f) => JSON.stringify(f.toString('latin1')),
  });
  t.true(cpuMsSince(started) < 30_000, 'finishes quickly');
});
