import test from 'ava';
import { minifinder2Frame } from '../../../protocols/minifinder2/minifinder2.decoder.js';
import { minifinder2Protocol } from '../../../protocols/minifinder2/minifinder2.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { decodesSanely, fuzzSplitter, mutateBytes, prng } from '../../helpers/fuzz.js';
import { frameBytes, loadVectors } from '../../helpers/vectors.js';

const corpus = loadVectors('minifinder2')
  .filter((v) => v.test_kind === 'decoder')
  .map((v) => frameBytes(v));
const ctx: DecodeContext = {
  now: new Date(Date.UTC(2026, 0, 1)),
  transport: 'tcp',
  checksum: 'accept',
  deviceId: '861629050625098',
  session: {},
};

const mutate = (rand: () => number, input: Buffer): Buffer =>
  mutateBytes(rand, input, { ending: '\x00', specials: [0x01, 0x02, 0x20, 0x24, 0x28, 0x2c, 0x7f, 0xab, 0xff] });

const check = (frame: Buffer): string | undefined => decodesSanely(() => minifinder2Protocol.decode!(frame, ctx));

test('minifinder2.fuzz: mutated vector frames only ever throw ProtocolError', (t) => {
  const rand = prng(0x5187);
  for (let i = 0; i < 20_000; i++) {
    const frame = mutate(rand, corpus[Math.floor(rand() * corpus.length)]);
    const problem = check(frame);
    if (problem) return t.fail(`${frame.toString('hex')}: ${problem}`);
  }
  t.pass();
});

test('minifinder2.fuzz: random records of every message type only ever throw ProtocolError', (t) => {
  const rand = prng(0xab);
  const keys = [0x01, 0x02, 0x14, 0x19, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b, 0x2c];
  for (let i = 0; i < 10_000; i++) {
    const records: number[] = [[0x01, 0x02, 0x03, 0x04, 0x7f][Math.floor(rand() * 5)]];
    for (let r = Math.floor(rand() * 6); r > 0; r--) {
      const length = Math.floor(rand() * 24);
      records.push(length, keys[Math.floor(rand() * keys.length)]);
      for (let b = 1; b < length; b++) records.push(Math.floor(rand() * 256));
    }
    const frame = minifinder2Frame(i & 0xffff, Buffer.from(records));
    frame[1] = rand() < 0.5 ? 0x10 : 0x00;
    const problem = check(frame);
    if (problem) return t.fail(`${frame.toString('hex')}: ${problem}`);
  }
  t.pass();
});

test('minifinder2.fuzz: the splitter stays bounded on mutated streams and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(0x2187);
  fuzzSplitter(t, {
    protocol: minifinder2Protocol,
    rand,
    rounds: 3000,
    input: () => mutate(rand, corpus[Math.floor(rand() * corpus.length)]),
    decode: (f) => minifinder2Protocol.decode!(f, ctx),
    show: (f) => f.toString('hex'),
  });
});
