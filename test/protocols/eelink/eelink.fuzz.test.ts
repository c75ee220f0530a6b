import test from 'ava';
import { eelinkProtocol } from '../../../protocols/eelink/eelink.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { decodesSanely, fuzzSplitter, mutateBytes, prng } from '../../helpers/fuzz.js';
import { frameBytes, loadVectors } from '../../helpers/vectors.js';

const vectors = loadVectors('eelink').filter((v) => v.test_kind === 'decoder');
const corpus = vectors.map((v) => ({ frame: frameBytes(v), udp: v.transport === 'udp' }));
const ctx = (udp: boolean): DecodeContext => ({
  now: new Date(Date.UTC(2026, 0, 1)),
  transport: udp ? 'udp' : 'tcp',
  checksum: 'accept',
  session: {},
  deviceId: '354188048612829',
});

const mutate = (rand: () => number, input: Buffer): Buffer =>
  mutateBytes(rand, input, { ending: '', specials: [0x67, 0x45, 0x4c, 0x00, 0xff, 0x2c, 0x3a] });

const check = (frame: Buffer, udp: boolean): string | undefined =>
  decodesSanely(() => eelinkProtocol.decode!(frame, ctx(udp)));

test('eelink.fuzz: mutated vector frames only ever throw ProtocolError, and positions are sane', (t) => {
  const rand = prng(0x454c);
  for (let i = 0; i < 20_000; i++) {
    const c = corpus[Math.floor(rand() * corpus.length)];
    const frame = mutate(rand, c.frame);
    const problem = check(frame, c.udp);
    if (problem) return t.fail(`${frame.toString('hex')}: ${problem}`);
  }
  t.pass();
});

test('eelink.fuzz: random content under every packet type only ever throws ProtocolError', (t) => {
  const rand = prng(5);
  const types = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x80, 0x81];
  for (let i = 0; i < 10_000; i++) {
    const content = Buffer.from(Array.from({ length: Math.floor(rand() * 90) }, () => Math.floor(rand() * 256)));
    const head = Buffer.from([0x67, 0x67, types[Math.floor(rand() * types.length)], 0, 0, 0, 1]);
    head.writeUInt16BE(2 + content.length, 3);
    const frame = Buffer.concat([head, content]);
    const problem = check(frame, false);
    if (problem) return t.fail(`${frame.toString('hex')}: ${problem}`);
  }
  t.pass();
});

test('eelink.fuzz: the splitter stays bounded on mutated streams and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(0x67);
  const tcp = corpus.filter((c) => !c.udp);
  fuzzSplitter(t, {
    protocol: eelinkProtocol,
    rand,
    rounds: 3000,
    input: () => mutate(rand, tcp[Math.floor(rand() * tcp.length)].frame),
    decode: (f) => eelinkProtocol.decode!(f, ctx(false)),
    show: (f) => f.toString('hex'),
  });
});
