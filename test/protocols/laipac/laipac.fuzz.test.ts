import test from 'ava';
import { laipacProtocol } from '../../../protocols/laipac/laipac.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { cpuMsSince } from '../../helpers/wait.js';
import { decodesSanely, fuzzSplitter, mutateBytes, prng } from '../../helpers/fuzz.js';

const corpus = loadVectors('laipac')
  .filter((v) => v.test_kind === 'decoder')
  .map((v) => frameBytes(v));
const ctx = (): DecodeContext => ({
  now: new Date(Date.UTC(2026, 0, 1)),
  transport: 'tcp',
  checksum: 'accept',
  model: 'AVL110',
  session: {},
});

const mutate = (rand: () => number, input: Buffer): Buffer =>
  mutateBytes(rand, input, { ending: '\r\n', specials: [0x24, 0x2c, 0x2a, 0x2e, 0x61, 0x41, 0x4e, 0x57] });

const check = (frame: Buffer): string | undefined => decodesSanely(() => laipacProtocol.decode!(frame, ctx()));

test('laipac.fuzz: mutated vector sentences only ever throw ProtocolError, positions sane', (t) => {
  const rand = prng(0x5048);
  for (let i = 0; i < 20_000; i++) {
    const frame = mutate(rand, corpus[Math.floor(rand() * corpus.length)]);
    const problem = check(frame);
    if (problem) return t.fail(`${frame.toString('latin1')}: ${problem}`);
  }
  t.pass();
});

test('laipac.fuzz: random bytes after $AVRMC, only ever throw ProtocolError', (t) => {
  const rand = prng(48);
  for (let i = 0; i < 10_000; i++) {
    const body = Buffer.from(Array.from({ length: Math.floor(rand() * 80) }, () => Math.floor(rand() * 256)));
    const problem = check(Buffer.concat([Buffer.from('$AVRMC,'), body]));
    if (problem) return t.fail(`${body.toString('hex')}: ${problem}`);
  }
  t.pass();
});

test('laipac.fuzz: a hostile long sentence does not backtrack for long', (t) => {
  const started = process.cpuUsage();
  check(Buffer.from(`$AVRMC,1,${'1,'.repeat(500)}*00`));
  check(Buffer.from(`$EAVSYS,1,${'1'.repeat(1000)},*00`));
  t.true(cpuMsSince(started) < 2_000);
});

test('laipac.fuzz: the splitter stays bounded on mutated streams and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(0x1a1);
  fuzzSplitter(t, {
    protocol: laipacProtocol,
    rand,
    rounds: 3000,
    input: () => mutate(rand, corpus[Math.floor(rand() * corpus.length)]),
    decode: (f) => laipacProtocol.decode!(f, ctx()),
    show: (f) => f.toString('latin1'),
  });
});
