import test from 'ava';
import { watchProtocol } from '../../../protocols/watch/watch.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { decodesSanely, fuzzSplitter, mutateBytes, prng } from '../../helpers/fuzz.js';

const corpus = loadVectors('watch')
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

const check = (frame: Buffer): string | undefined => decodesSanely(() => watchProtocol.decode!(frame, ctx()));

test('watch.fuzz: mutated vector frames only ever throw ProtocolError', (t) => {
  const rand = prng(0x5741);
  for (let i = 0; i < 20_000; i++) {
    const frame = mutate(rand, corpus[Math.floor(rand() * corpus.length)]);
    const problem = check(frame);
    if (problem) return t.fail(`${frame.toString('latin1')}: ${problem}`);
  }
  t.pass();
});

test('watch.fuzz: random bytes after a [ only ever throw ProtocolError', (t) => {
  const rand = prng(11);
  for (let i = 0; i < 10_000; i++) {
    const body = Buffer.from(Array.from({ length: Math.floor(rand() * 60) }, () => Math.floor(rand() * 256)));
    const frame = Buffer.concat([Buffer.from('[SG*1*'), body, Buffer.from(']')]);
    const problem = check(frame);
    if (problem) return t.fail(`${frame.toString('hex')}: ${problem}`);
  }
  t.pass();
});

test('watch.fuzz: the splitter stays bounded on mutated streams and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(0x77);
  fuzzSplitter(t, {
    protocol: watchProtocol,
    rand,
    rounds: 3000,
    input: () => mutate(rand, corpus[Math.floor(rand() * corpus.length)]),
    decode: (f) => watchProtocol.decode!(f, ctx()),
    show: (f) => f.toString('latin1'),
  });
});
