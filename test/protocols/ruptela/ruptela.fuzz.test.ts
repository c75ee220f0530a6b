import test from 'ava';
import { ruptelaProtocol } from '../../../protocols/ruptela/ruptela.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { decodesSanely, fuzzSplitter, mutateBytes, prng } from '../../helpers/fuzz.js';

const corpus = loadVectors('ruptela')
  .filter((v) => v.test_kind === 'decoder')
  .map((v) => frameBytes(v));
const ctx = (): DecodeContext => ({
  now: new Date(Date.UTC(2026, 0, 1)),
  transport: 'tcp',
  checksum: 'accept',
  session: {},
});

const mutate = (rand: () => number, input: Buffer): Buffer =>
  mutateBytes(rand, input, { ending: ']', specials: [0x2c, 0x2a, 0x5b, 0x5d, 0x7d, 0x2d, 0x2e] });

const check = (frame: Buffer): string | undefined => decodesSanely(() => ruptelaProtocol.decode!(frame, ctx()));

test('ruptela.fuzz: mutated vector frames only ever throw ProtocolError', (t) => {
  const rand = prng(0x5254);
  for (let i = 0; i < 20_000; i++) {
    const frame = mutate(rand, corpus[Math.floor(rand() * corpus.length)]);
    const problem = check(frame);
    if (problem) return t.fail(`${frame.toString('hex')}: ${problem}`);
  }
  t.pass();
});

test('ruptela.fuzz: random payloads of records packets only ever throw ProtocolError', (t) => {
  const rand = prng(11);
  for (let i = 0; i < 10_000; i++) {
    const body = Buffer.from(Array.from({ length: Math.floor(rand() * 60) }, () => Math.floor(rand() * 256)));
    const head = Buffer.from([
      0,
      9 + body.length,
      0,
      3,
      0x16,
      0x7d,
      0x76,
      0x5c,
      0x15,
      0x5d,
      [1, 68, 9, 7, 17, 15][Math.floor(rand() * 6)],
    ]);
    const frame = Buffer.concat([head, body, Buffer.alloc(2)]);
    const problem = check(frame);
    if (problem) return t.fail(`${frame.toString('hex')}: ${problem}`);
  }
  t.pass();
});

test('ruptela.fuzz: the splitter stays bounded on mutated streams and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(0x77);
  fuzzSplitter(t, {
    protocol: ruptelaProtocol,
    rand,
    rounds: 3000,
    input: () => mutate(rand, corpus[Math.floor(rand() * corpus.length)]),
    decode: (f) => ruptelaProtocol.decode!(f, ctx()),
    show: (f) => f.toString('hex'),
  });
});
