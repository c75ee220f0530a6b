import test from 'ava';
import { xexunProtocol } from '../../../protocols/xexun/xexun.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { decodesSanely, fuzzSplitter, mutateBytes, prng } from '../../helpers/fuzz.js';

const corpus = loadVectors('xexun')
  .filter((v) => v.test_kind === 'decoder')
  .map((v) => frameBytes(v));
const ctx = (extended: boolean): DecodeContext => ({
  now: new Date(Date.UTC(2026, 0, 1)),
  transport: 'tcp',
  checksum: 'accept',
  session: {},
  options: { extended: String(extended) },
});

const mutate = (rand: () => number, input: Buffer): Buffer =>
  mutateBytes(rand, input, { ending: ',', specials: [0x2c, 0x2a, 0x0d, 0x0a, 0x00, 0x2e, 0x3a, 0x2d] });

test('xexun.fuzz: mutated vector frames only ever throw ProtocolError, in both modes', (t) => {
  const rand = prng(0x5845);
  for (let i = 0; i < 20_000; i++) {
    const frame = mutate(rand, corpus[Math.floor(rand() * corpus.length)]);
    const extended = rand() < 0.5;
    const problem = decodesSanely(() => xexunProtocol.decode!(frame, ctx(extended)));
    if (problem) return t.fail(`${frame.toString('latin1')} (extended=${extended}): ${problem}`);
  }
  t.pass();
});

test('xexun.fuzz: the splitter stays bounded on mutated streams and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(0x78);
  fuzzSplitter(t, {
    protocol: xexunProtocol,
    rand,
    rounds: 3000,
    input: () => mutate(rand, corpus[Math.floor(rand() * corpus.length)]),
    decode: (f) => xexunProtocol.decode!(f, ctx(rand() < 0.5)),
    show: (f) => f.toString('latin1'),
  });
});
