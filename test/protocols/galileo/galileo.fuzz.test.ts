import test from 'ava';
import { galileoProtocol } from '../../../protocols/galileo/galileo.protocol.js';
import { crc16Modbus } from '../../../protocols/shared/crc.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { decodesSanely, fuzzSplitter, mutateBytes, prng } from '../../helpers/fuzz.js';
import { frameBytes, loadVectors } from '../../helpers/vectors.js';

const corpus = loadVectors('galileo')
  .filter((v) => v.test_kind === 'decoder')
  .map((v) => frameBytes(v));
const ctx = (compressed: boolean): DecodeContext => ({
  now: new Date(Date.UTC(2026, 0, 1)),
  transport: 'tcp',
  checksum: 'accept',
  deviceId: '868204001549087',
  session: {},
  ...(compressed && { options: { compressed: 'true' } }),
});

const mutate = (rand: () => number, input: Buffer): Buffer =>
  mutateBytes(rand, input, { ending: '\x00', specials: [0x01, 0x03, 0x07, 0x08, 0x30, 0xe1, 0xea, 0xfe, 0xff] });

const check = (frame: Buffer, compressed = false): string | undefined =>
  decodesSanely(() => galileoProtocol.decode!(frame, ctx(compressed)));

test('galileo.fuzz: mutated vector frames only ever throw ProtocolError', (t) => {
  const rand = prng(0x6a1);
  for (let i = 0; i < 20_000; i++) {
    const frame = mutate(rand, corpus[Math.floor(rand() * corpus.length)]);
    const problem = check(frame, rand() < 0.3);
    if (problem) return t.fail(`${frame.toString('hex')}: ${problem}`);
  }
  t.pass();
});

test('galileo.fuzz: random tag data in main, compressed and photo packets only ever throws ProtocolError', (t) => {
  const rand = prng(34);
  for (let i = 0; i < 10_000; i++) {
    const data = Buffer.from(Array.from({ length: Math.floor(rand() * 80) }, () => Math.floor(rand() * 256)));
    const head = Buffer.from([[0x01, 0x07, 0x08][Math.floor(rand() * 3)], 0, 0]);
    head.writeUInt16LE(data.length, 1);
    const body = Buffer.concat([head, data]);
    const crc = Buffer.alloc(2);
    crc.writeUInt16LE(crc16Modbus(body), 0);
    const frame = Buffer.concat([body, crc]);
    const problem = check(frame);
    if (problem) return t.fail(`${frame.toString('hex')}: ${problem}`);
  }
  t.pass();
});

test('galileo.fuzz: the splitter stays bounded on mutated streams and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(0x5034);
  fuzzSplitter(t, {
    protocol: galileoProtocol,
    rand,
    rounds: 3000,
    input: () => mutate(rand, corpus[Math.floor(rand() * corpus.length)]),
    decode: (f) => galileoProtocol.decode!(f, ctx(false)),
    show: (f) => f.toString('hex'),
  });
});
