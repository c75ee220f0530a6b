import test from 'ava';
import { wialonProtocol } from '../../../protocols/wialon/wialon.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { cpuMsSince } from '../../helpers/wait.js';
import { decodesSanely, fuzzSplitter, mutateBytes, prng } from '../../helpers/fuzz.js';

const corpus = loadVectors('wialon')
  .filter((v) => v.test_kind === 'decoder')
  .map((v) => frameBytes(v));
/** a connection after an IPS 2.0 login, so the CRC path runs too */
const ctx = (): DecodeContext => ({
  now: new Date(Date.UTC(2026, 0, 1)),
  transport: 'tcp',
  checksum: 'accept',
  deviceId: '123456789012345',
  session: { 'wialon.version': '2.0' },
});

const mutate = (rand: () => number, input: Buffer): Buffer =>
  mutateBytes(rand, input, { ending: '\r\n', specials: [0x23, 0x3b, 0x7c, 0x2c, 0x3a, 0x2e, 0x4e, 0x41] });

const check = (frame: Buffer, transport: 'tcp' | 'udp' = 'tcp'): string | undefined =>
  decodesSanely(() =>
    transport === 'udp'
      ? wialonProtocol.decodeDatagram!(frame, { ...ctx(), transport })
      : wialonProtocol.decode!(frame, ctx()),
  );

test('wialon.fuzz: mutated vector packets only ever throw ProtocolError, positions sane', (t) => {
  const rand = prng(0x1b5);
  for (let i = 0; i < 20_000; i++) {
    const frame = mutate(rand, corpus[Math.floor(rand() * corpus.length)]);
    const problem = check(frame, i % 2 ? 'udp' : 'tcp');
    if (problem) return t.fail(`${frame.toString('latin1')}: ${problem}`);
  }
  t.pass();
});

test('wialon.fuzz: random bytes after #D# only ever throw ProtocolError', (t) => {
  const rand = prng(39);
  for (let i = 0; i < 10_000; i++) {
    const body = Buffer.from(Array.from({ length: Math.floor(rand() * 80) }, () => Math.floor(rand() * 256)));
    const problem = check(Buffer.concat([Buffer.from('#D#'), body]));
    if (problem) return t.fail(`${body.toString('hex')}: ${problem}`);
  }
  t.pass();
});

test('wialon.fuzz: a hostile long packet does not backtrack for long', (t) => {
  const started = process.cpuUsage();
  for (const hostile of [`#D#${'1;'.repeat(8000)}`, `#B#${'NA;'.repeat(4000)}|`.repeat(2), `#D#${'9'.repeat(30000)}`]) {
    check(Buffer.from(hostile));
  }
  t.true(cpuMsSince(started) < 2_000);
});

test('wialon.fuzz: the splitter stays bounded on mutated streams and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(0x5039);
  fuzzSplitter(t, {
    protocol: wialonProtocol,
    rand,
    rounds: 3000,
    input: () => mutate(rand, corpus[Math.floor(rand() * corpus.length)]),
    decode: (f) => wialonProtocol.decode!(f, ctx()),
    show: (f) => f.toString('latin1'),
  });
});
