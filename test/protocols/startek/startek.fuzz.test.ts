import test from 'ava';
import { startekProtocol } from '../../../protocols/startek/startek.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { decodesSanely, fuzzSplitter, mutateBytes, prng } from '../../helpers/fuzz.js';

const corpus = loadVectors('startek')
  .filter((v) => v.test_kind === 'decoder')
  .map((v) => frameBytes(v));
const ctx = (): DecodeContext => ({
  now: new Date(Date.UTC(2026, 0, 1)),
  transport: 'tcp',
  checksum: 'accept',
  session: {},
});

const mutate = (rand: () => number, input: Buffer): Buffer =>
  mutateBytes(rand, input, { ending: '\r\n', specials: [0x2c, 0x7c, 0x0d, 0x0a, 0x2e, 0x2d, 0x26, 0x25] });

const check = (frame: Buffer): string | undefined => decodesSanely(() => startekProtocol.decode!(frame, ctx()));

test('startek.fuzz: mutated vector frames only ever throw ProtocolError', (t) => {
  const rand = prng(0x5354);
  for (let i = 0; i < 20_000; i++) {
    const frame = mutate(rand, corpus[Math.floor(rand() * corpus.length)]);
    const problem = check(frame);
    if (problem) return t.fail(`${frame.toString('latin1')}: ${problem}`);
  }
  t.pass();
});

test('startek.fuzz: random content after a frame head only ever throws ProtocolError', (t) => {
  const rand = prng(17);
  const alphabet = '0123456789ABCDEF,|.-AVT\r\n%L';
  for (let i = 0; i < 10_000; i++) {
    const body = Array.from({ length: Math.floor(rand() * 120) }, () => alphabet[Math.floor(rand() * alphabet.length)]);
    const code = ['000', '710', '129'][Math.floor(rand() * 3)];
    const frame = Buffer.from(`&&a99,860262050010565,${code},${body.join('')}00\r\n`, 'latin1');
    const problem = check(frame);
    if (problem) return t.fail(`${frame.toString('latin1')}: ${problem}`);
  }
  t.pass();
});

test('startek.fuzz: the splitter stays bounded on mutated streams and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(0x77);
  fuzzSplitter(t, {
    protocol: startekProtocol,
    rand,
    rounds: 3000,
    input: () => mutate(rand, corpus[Math.floor(rand() * corpus.length)]),
    decode: (f) => startekProtocol.decode!(f, ctx()),
    show: (f) => f.toString('latin1'),
  });
});
