import test from 'ava';
import { meiligaoProtocol } from '../../../protocols/meiligao/meiligao.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { decodesSanely, fuzzSplitter, mutateBytes, prng } from '../../helpers/fuzz.js';
import { frameBytes, loadVectors } from '../../helpers/vectors.js';

const corpus = loadVectors('meiligao')
  .filter((v) => v.test_kind === 'decoder')
  .map((v) => frameBytes(v));
const ctx = (): DecodeContext => ({
  now: new Date(Date.UTC(2026, 0, 1)),
  transport: 'tcp',
  checksum: 'accept',
  session: {},
  options: { server: '192.0.2.1:5009' },
});

// the sentence's delimiters and the bytes that end records and frames
const mutate = (rand: () => number, input: Buffer): Buffer =>
  mutateBytes(rand, input, { ending: '\r\n', specials: [0x2c, 0x7c, 0x2e, 0x5c, 0x24, 0x2d, 0x41, 0x56, 0x0d] });

const check = (frame: Buffer, c = ctx()): string | undefined => decodesSanely(() => meiligaoProtocol.decode!(frame, c));

test('meiligao.fuzz: mutated vector frames only ever throw ProtocolError, and positions are sane', (t) => {
  const rand = prng(0x4d4c);
  for (let i = 0; i < 20_000; i++) {
    const frame = mutate(rand, corpus[Math.floor(rand() * corpus.length)]);
    const problem = check(frame);
    if (problem) return t.fail(`${frame.toString('hex')}: ${problem}`);
  }
  t.pass();
});

test('meiligao.fuzz: random data under every command only ever throws ProtocolError', (t) => {
  const rand = prng(9);
  const commands = [0x5000, 0x0001, 0x0002, 0x9955, 0x9016, 0x9999, 0x9966, 0x6688, 0x9901, 0x9902, 0x9903];
  const photo = [0x0800, 0x9988, 0x0f80, 0x9977];
  const c = ctx();
  for (let i = 0; i < 10_000; i++) {
    const data = Buffer.from(Array.from({ length: Math.floor(rand() * 80) }, () => Math.floor(rand() * 256)));
    const all = [...commands, ...photo];
    const head = Buffer.from('2424000012345678901234', 'hex');
    const command = Buffer.alloc(2);
    command.writeUInt16BE(all[Math.floor(rand() * all.length)]);
    const frame = Buffer.concat([head, command, data, Buffer.from('00000d0a', 'hex')]);
    frame.writeUInt16BE(frame.length, 2);
    const problem = check(frame, c);
    if (problem) return t.fail(`${frame.toString('hex')}: ${problem}`);
  }
  t.pass();
});

test('meiligao.fuzz: the splitter stays bounded on mutated streams and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(0x99);
  fuzzSplitter(t, {
    protocol: meiligaoProtocol,
    rand,
    rounds: 3000,
    input: () => mutate(rand, corpus[Math.floor(rand() * corpus.length)]),
    decode: (f) => meiligaoProtocol.decode!(f, ctx()),
    show: (f) => f.toString('hex'),
  });
});
