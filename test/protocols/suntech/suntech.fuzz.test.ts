import test from 'ava';
import { suntechProtocol } from '../../../protocols/suntech/suntech.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { decodesSanely, fuzzSplitter, mutateBytes, prng } from '../../helpers/fuzz.js';

const corpus = loadVectors('suntech')
  .filter((v) => v.test_kind === 'decoder')
  .map((v) => frameBytes(v));
const ctx = (): DecodeContext => ({
  now: new Date(Date.UTC(2026, 0, 1)),
  transport: 'tcp',
  checksum: 'accept',
  session: {},
});

const mutate = (rand: () => number, input: Buffer): Buffer =>
  mutateBytes(rand, input, { ending: ';', specials: [0x3b, 0x0d, 0x0a, 0x00, 0x2d, 0x2e, 0x3a] });

const check = (frame: Buffer): string | undefined => decodesSanely(() => suntechProtocol.decode!(frame, ctx()));

test('suntech.fuzz: mutated vector frames only ever throw ProtocolError', (t) => {
  const rand = prng(0x5354);
  for (let i = 0; i < 20_000; i++) {
    const frame = mutate(rand, corpus[Math.floor(rand() * corpus.length)]);
    const problem = check(frame);
    if (problem) return t.fail(`${frame.toString('latin1')}: ${problem}`);
  }
  t.pass();
});

test('suntech.fuzz: random fields after a report prefix, and random binary reports, only ever throw ProtocolError', (t) => {
  const rand = prng(11);
  for (let i = 0; i < 10_000; i++) {
    const body = Buffer.from(Array.from({ length: Math.floor(rand() * 60) }, () => Math.floor(rand() * 256)));
    const prefix = ['ST300STT;1;', 'STT;1;', 'ST910;Alert;1;', 'ST410STT;1;', 'RES;', ''][Math.floor(rand() * 6)];
    const frame = prefix
      ? Buffer.concat([Buffer.from(prefix), body])
      : Buffer.concat([Buffer.from([0x81, 0x00, body.length]), body]);
    const problem = check(frame);
    if (problem) return t.fail(`${frame.toString('hex')}: ${problem}`);
  }
  t.pass();
});

test('suntech.fuzz: the splitter stays bounded on mutated streams and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(0x77);
  fuzzSplitter(t, {
    protocol: suntechProtocol,
    rand,
    rounds: 3000,
    input: () => mutate(rand, corpus[Math.floor(rand() * corpus.length)]),
    decode: (f) => suntechProtocol.decode!(f, ctx()),
    show: (f) => f.toString('latin1'),
  });
});
