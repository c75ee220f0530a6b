import test from 'ava';
import { totemProtocol } from '../../../protocols/totem/totem.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { decodesSanely, fuzzSplitter, mutateBytes, prng } from '../../helpers/fuzz.js';

const corpus = loadVectors('totem')
  .filter((v) => v.test_kind === 'decoder')
  .map((v) => frameBytes(v));
const ctx = (): DecodeContext => ({
  now: new Date(Date.UTC(2026, 0, 1)),
  transport: 'tcp',
  checksum: 'accept',
  session: {},
});

const mutate = (rand: () => number, input: Buffer): Buffer =>
  mutateBytes(rand, input, { ending: '|', specials: [0x7c, 0x24, 0x2c, 0x2a, 0x0d, 0x0a, 0x00, 0x2e, 0x30] });

test('totem.fuzz: mutated vector frames only ever throw ProtocolError', (t) => {
  const rand = prng(0x544f);
  for (let i = 0; i < 20_000; i++) {
    const frame = mutate(rand, corpus[Math.floor(rand() * corpus.length)]);
    const problem = decodesSanely(() => totemProtocol.decode!(frame, ctx()));
    if (problem) return t.fail(`${frame.toString('latin1')}: ${problem}`);
  }
  t.pass();
});

test('totem.fuzz: the splitter stays bounded on mutated streams and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(0x79);
  fuzzSplitter(t, {
    protocol: totemProtocol,
    rand,
    rounds: 3000,
    input: () => mutate(rand, corpus[Math.floor(rand() * corpus.length)]),
    decode: (f) => totemProtocol.decode!(f, ctx()),
    show: (f) => f.toString('latin1'),
  });
});
