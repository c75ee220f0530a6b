import test from 'ava';
import { atrackProtocol } from '../../../protocols/atrack/atrack.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { decodesSanely, fuzzSplitter, mutateBytes, prng } from '../../helpers/fuzz.js';
import { frameBytes, loadVectors } from '../../helpers/vectors.js';

const vectors = loadVectors('atrack').filter((v) => v.test_kind === 'decoder');
const corpus = vectors.map((v) => frameBytes(v));
/** each frame with the settings of its vector, and under other settings too */
const SETTINGS: Record<string, string>[] = [
  {},
  { custom: 'true' },
  { longDate: 'true' },
  { form: '%AT%BV%CD%CE%CN%GQ%LC%SA%VN%BC%EH%JH3%ZO4%GN' },
  { form: '%BC', frameMask: '1' },
];
const ctx = (rand: () => number): DecodeContext => ({
  now: new Date(Date.UTC(2026, 0, 1)),
  transport: 'tcp',
  checksum: 'accept',
  session: {},
  options: SETTINGS[Math.floor(rand() * SETTINGS.length)],
});

const mutate = (rand: () => number, input: Buffer): Buffer =>
  mutateBytes(rand, input, { ending: '\r\n', specials: [0x2c, 0x0d, 0x0a, 0x00, 0x25, 0x3a, 0x40, 0xfe, 0x02] });

test('atrack.fuzz: mutated vector frames only ever throw ProtocolError, and positions stay sane', (t) => {
  const rand = prng(0xa7ac);
  for (let i = 0; i < 20_000; i++) {
    const frame = mutate(rand, corpus[Math.floor(rand() * corpus.length)]);
    const c = ctx(rand);
    const problem = decodesSanely(() => atrackProtocol.decode!(frame, c));
    if (problem) return t.fail(`${frame.toString('hex')} ${JSON.stringify(c.options)}: ${problem}`);
  }
  t.pass();
});

test('atrack.fuzz: random bodies after binary, text, keep-alive and answer prefixes only ever throw ProtocolError', (t) => {
  const rand = prng(44);
  const prefixes = ['@P', '@R', '@P,1,80,1,1234,', '$INFO=', '$', '\xfe\x02', '\x03\x01,'];
  for (let i = 0; i < 10_000; i++) {
    const body = Buffer.from(Array.from({ length: Math.floor(rand() * 120) }, () => Math.floor(rand() * 256)));
    const frame = Buffer.concat([Buffer.from(prefixes[Math.floor(rand() * prefixes.length)], 'latin1'), body]);
    const c = ctx(rand);
    const problem = decodesSanely(() => atrackProtocol.decode!(frame, c));
    if (problem) return t.fail(`${frame.toString('hex')} ${JSON.stringify(c.options)}: ${problem}`);
  }
  t.pass();
});

test('atrack.fuzz: the splitter stays bounded on mutated streams and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(0x5044);
  fuzzSplitter(t, {
    protocol: atrackProtocol,
    rand,
    rounds: 3000,
    input: () => mutate(rand, corpus[Math.floor(rand() * corpus.length)]),
    decode: (f) => atrackProtocol.decode!(f, ctx(rand)),
    show: (f) => f.toString('hex'),
  });
});
