import test from 'ava';
import { tlt2hProtocol } from '../../../protocols/tlt2h/tlt2h.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { cpuMsSince } from '../../helpers/wait.js';
import { decodesSanely, fuzzSplitter, mutateBytes, prng } from '../../helpers/fuzz.js';

const corpus = loadVectors('tlt2h')
  .filter((v) => v.test_kind === 'decoder')
  .map((v) => frameBytes(v));
const ctx = (transport: 'tcp' | 'udp' = 'tcp'): DecodeContext => ({
  now: new Date(Date.UTC(2026, 0, 1)),
  transport,
  checksum: 'accept',
  session: {},
});

const mutate = (rand: () => number, input: Buffer): Buffer =>
  mutateBytes(rand, input, {
    ending: '##\r\n',
    specials: [0x23, 0x2c, 0x24, 0x2a, 0x0d, 0x0a, 0x2e, 0x41, 0x56, 0x4e, 0x53],
  });

const check = (frame: Buffer, transport: 'tcp' | 'udp' = 'tcp'): string | undefined =>
  decodesSanely(() =>
    transport === 'udp' ? tlt2hProtocol.decodeDatagram!(frame, ctx(transport)) : tlt2hProtocol.decode!(frame, ctx()),
  );

test('tlt2h.fuzz: mutated vector messages only ever throw ProtocolError, positions sane', (t) => {
  const rand = prng(0x5030);
  for (let i = 0; i < 20_000; i++) {
    const frame = mutate(rand, corpus[Math.floor(rand() * corpus.length)]);
    const problem = check(frame, i % 2 ? 'udp' : 'tcp');
    if (problem) return t.fail(`${JSON.stringify(frame.toString('latin1'))}: ${problem}`);
  }
  t.pass();
});

test('tlt2h.fuzz: random record lines after a good header only ever throw ProtocolError', (t) => {
  const rand = prng(22);
  const heads = ['#', '#39#', '#4106', '#39#262,03,8CE6,A672'];
  const kinds = ['$GPRMC,', '$WIFI,', ''];
  for (let i = 0; i < 10_000; i++) {
    const body = Buffer.from(Array.from({ length: Math.floor(rand() * 80) }, () => Math.floor(rand() * 256)));
    const line = `${heads[i % heads.length]}${kinds[i % kinds.length]}`;
    const frame = Buffer.concat([Buffer.from(`#357671030946351#V500#0000#AUTO#1\r\n${line}`), body]);
    const problem = check(frame);
    if (problem) return t.fail(`${line}${body.toString('hex')}: ${problem}`);
  }
  t.pass();
});

test('tlt2h.fuzz: hostile long records do not backtrack for long', (t) => {
  const started = process.cpuUsage();
  const head = '#357671030946351#V500#0000#AUTO#1\r\n';
  for (const line of [
    `#$WIFI,051550.00,A,${'-50,7683C2CBC0B0,'.repeat(1500)}`,
    `#${'1'.repeat(20000)}$GPRMC,`,
    `#$GPRMC,1.0,A,${'1'.repeat(20000)}`,
    `#${'1,'.repeat(10000)}$WIFI,`,
  ]) {
    check(Buffer.from(head + line));
  }
  t.true(cpuMsSince(started) < 2_000);
});

test('tlt2h.fuzz: the splitter stays bounded on mutated streams and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(0x2);
  fuzzSplitter(t, {
    protocol: tlt2hProtocol,
    rand,
    rounds: 3000,
    input: () => mutate(rand, corpus[Math.floor(rand() * corpus.length)]),
    decode: (f) => tlt2hProtocol.decode!(f, ctx()),
    show: (f) => JSON.stringify(f.toString('latin1')),
  });
});
