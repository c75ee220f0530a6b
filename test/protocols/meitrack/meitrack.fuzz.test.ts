import test from 'ava';
import { cpuMsSince } from '../../helpers/wait.js';
import { meitrackProtocol } from '../../../protocols/meitrack/meitrack.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { fuzzSplitter, onlyProtocolErrors, prng } from '../../helpers/fuzz.js';

const real = loadVectors('meitrack')
  .filter((v) => v.test_kind === 'decoder')
  .map(frameBytes);
const ALPHABET = Buffer.from('0123456789ABCDEF,.|*-$AVC\r\n');

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
    case 3: // a real frame spliced into another
      return Buffer.concat([b.subarray(0, int(b.length)), real[int(real.length)]]);
    case 4: // a header with random protocol characters
      return Buffer.concat([
        Buffer.from('$$A99,356307042441013,'),
        Buffer.from(Array.from({ length: int(200) }, () => ALPHABET[int(ALPHABET.length)])),
      ]);
    default: // random bytes after a CCE/CCC header
      return Buffer.concat([
        Buffer.from(int(2) ? '$$A300,356307042441013,CCE,' : '$$A300,356307042441013,CCC,'),
        Buffer.from(Array.from({ length: int(300) }, () => int(256))),
      ]);
  }
}

const ctx: DecodeContext = { now: new Date(Date.UTC(2024, 0, 1)), transport: 'tcp', checksum: 'accept', session: {} };

test('meitrack.fuzz: the decoder throws nothing but ProtocolError on mutated and random frames', (t) => {
  const rand = prng(0x2020);
  const started = process.cpuUsage();
  for (let i = 0; i < 8000; i++) {
    const input = mutate(rand, real[i % real.length]);
    const problem = onlyProtocolErrors(() => meitrackProtocol.decode!(input, ctx));
    if (problem) return t.fail(`input ${input.toString('hex')}: ${problem}`);
  }
  t.true(cpuMsSince(started) < 20_000, 'finishes quickly');
});

test('meitrack.fuzz: a hostile AAA report does not backtrack for long', (t) => {
  const started = process.cpuUsage();
  const hostile =
    '$$A999,356307042441013,AAA,35,1.0,1.0,260301100000,A,1,1,1,1,1,1,1,1,1|1|1|1,0000,' +
    '1|'.repeat(400) +
    ','.repeat(400) +
    'x';
  onlyProtocolErrors(() => meitrackProtocol.decode!(Buffer.from(hostile), ctx));
  t.true(cpuMsSince(started) < 2_000);
});

test('meitrack.fuzz: the splitter stays bounded and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(20);
  const started = process.cpuUsage();
  fuzzSplitter(t, {
    protocol: meitrackProtocol,
    rand,
    rounds: 3000,
    input: (i) => mutate(rand, real[i % real.length]),
    decode: (f) => meitrackProtocol.decode!(f, ctx),
    show: (f) => f.toString('hex'),
  });
  t.true(cpuMsSince(started) < 30_000, 'finishes quickly');
});
