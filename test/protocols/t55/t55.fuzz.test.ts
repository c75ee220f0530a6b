import test from 'ava';
import { t55Protocol } from '../../../protocols/t55/t55.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { decodesSanely, fuzzSplitter, mutateBytes, prng } from '../../helpers/fuzz.js';

const corpus = loadVectors('t55')
  .filter((v) => v.test_kind === 'decoder')
  .map((v) => frameBytes(v));
const ctx = (session: Record<string, unknown> = {}): DecodeContext => ({
  now: new Date(Date.UTC(2026, 0, 1)),
  transport: 'tcp',
  checksum: 'accept',
  session,
  options: { ack: 'true' },
});

const mutate = (rand: () => number, input: Buffer): Buffer =>
  mutateBytes(rand, input, { ending: '\r\n', specials: [0x2c, 0x24, 0x2a, 0x2f, 0x2e, 0x2d, 0x3a, 0x0d, 0x0a] });

test('t55.fuzz: mutated vector lines, on one session, only ever throw ProtocolError', (t) => {
  const rand = prng(0x7455);
  const session: Record<string, unknown> = {};
  for (let i = 0; i < 20_000; i++) {
    const frame = mutate(rand, corpus[Math.floor(rand() * corpus.length)]);
    const problem = decodesSanely(() => t55Protocol.decode!(frame, ctx(session)));
    if (problem) return t.fail(`${frame.toString('latin1')}: ${problem}`);
  }
  t.pass();
});

test('t55.fuzz: random fields after each sentence head only ever throw ProtocolError', (t) => {
  const rand = prng(23);
  const heads = ['$GPRMC,', '$GNGGA,', '$GPGLL,', '$GPRMA,', '$TRCCR,', '$GPIOP,', 'QZE,', '$PUBX,', '$GPTXT,NET,'];
  const alphabet = '0123456789.,NSEWAV*-:';
  for (let i = 0; i < 10_000; i++) {
    const body = Array.from({ length: Math.floor(rand() * 90) }, () => alphabet[Math.floor(rand() * alphabet.length)]);
    const frame = Buffer.from(heads[Math.floor(rand() * heads.length)] + body.join(''), 'latin1');
    const problem = decodesSanely(() => t55Protocol.decode!(frame, ctx({ 't55.identity': '1' })));
    if (problem) return t.fail(`${frame.toString('latin1')}: ${problem}`);
  }
  t.pass();
});

test('t55.fuzz: the splitter stays bounded on mutated streams and its lines decode or throw ProtocolError', (t) => {
  const rand = prng(0x78);
  fuzzSplitter(t, {
    protocol: t55Protocol,
    rand,
    rounds: 3000,
    input: () => mutate(rand, corpus[Math.floor(rand() * corpus.length)]),
    decode: (f) => t55Protocol.decode!(f, ctx()),
    show: (f) => f.toString('latin1'),
  });
});
