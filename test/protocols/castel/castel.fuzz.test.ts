import test from 'ava';
import { castelProtocol } from '../../../protocols/castel/castel.protocol.js';
import { crc16X25 } from '../../../protocols/shared/crc.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { decodesSanely, fuzzSplitter, mutateBytes, prng } from '../../helpers/fuzz.js';

const corpus = loadVectors('castel')
  .filter((v) => v.test_kind === 'decoder')
  .map((v) => frameBytes(v));
const ctx = (checksum: DecodeContext['checksum'] = 'accept'): DecodeContext => ({
  now: new Date(Date.UTC(2026, 0, 1)),
  transport: 'tcp',
  checksum,
  session: {},
});

const mutate = (rand: () => number, input: Buffer): Buffer =>
  mutateBytes(rand, input, { ending: '\r\n', specials: [0x40, 0x24, 0x0d, 0x0a, 0x00, 0xff] });

const check = (frame: Buffer, checksum: DecodeContext['checksum'] = 'accept'): string | undefined =>
  decodesSanely(() => castelProtocol.decode!(frame, ctx(checksum)));

/** every message type some decoder table handles, by header */
const TYPES = [
  0x1001, 0x1002, 0x1003, 0x4001, 0x4002, 0x4003, 0x4004, 0x4005, 0x4006, 0x4007, 0x4008, 0x4009, 0x400b, 0x400e,
  0x401f, 0x5101, 0xa002, 0xb001, 0x2001, 0x4201, 0x4202, 0x4204, 0x4206,
];

test('castel.fuzz: mutated vector frames only ever throw ProtocolError', (t) => {
  const rand = prng(0xca57e1);
  let decoded = 0;
  for (let i = 0; i < 20_000; i++) {
    const frame = mutate(rand, corpus[Math.floor(rand() * corpus.length)]);
    const problem = check(frame, rand() < 0.2 ? 'strict' : 'accept');
    if (problem) return t.fail(`${frame.toString('hex')}: ${problem}`);
    if (onlyDecodes(frame)) decoded++;
  }
  t.true(decoded > 1000, `some mutated frames still decode (${decoded})`);
});

function onlyDecodes(frame: Buffer): boolean {
  try {
    castelProtocol.decode!(frame, ctx());
    return true;
  } catch {
    return false;
  }
}

test('castel.fuzz: random bodies of every handled type, with a valid envelope, only ever throw ProtocolError', (t) => {
  const rand = prng(0x5c);
  for (let i = 0; i < 20_000; i++) {
    const version = [3, 4, 12, 5, undefined][Math.floor(rand() * 5)];
    const body = Buffer.from(Array.from({ length: Math.floor(rand() * 200) }, () => Math.floor(rand() * 256)));
    const head = Buffer.alloc(version === undefined ? 26 : 27);
    head.write(version === undefined ? '$$' : '@@', 0, 'latin1');
    if (version !== undefined) head[4] = version;
    head.write('213GDS2021000052', version === undefined ? 4 : 5, 'latin1');
    head.writeUInt16BE(TYPES[Math.floor(rand() * TYPES.length)], head.length - 2);
    const frame = Buffer.concat([head, body, Buffer.from('00000d0a', 'hex')]);
    frame.writeUInt16LE(frame.length, 2);
    frame.writeUInt16LE(crc16X25(frame, 0, frame.length - 4), frame.length - 4);
    const problem = check(frame, 'strict');
    if (problem) return t.fail(`${frame.toString('hex')}: ${problem}`);
  }
  t.pass();
});

test('castel.fuzz: the splitter stays bounded on mutated streams and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(0x77);
  fuzzSplitter(t, {
    protocol: castelProtocol,
    rand,
    rounds: 3000,
    input: () => mutate(rand, corpus[Math.floor(rand() * corpus.length)]),
    decode: (f) => castelProtocol.decode!(f, ctx()),
    show: (f) => f.toString('hex'),
  });
});
