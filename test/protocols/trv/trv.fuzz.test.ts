import test from 'ava';
import { trvProtocol } from '../../../protocols/trv/trv.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { cpuMsSince } from '../../helpers/wait.js';
import { decodesSanely, fuzzSplitter, mutateBytes, prng } from '../../helpers/fuzz.js';

const corpus = loadVectors('trv')
  .filter((v) => v.test_kind === 'decoder')
  .map((v) => frameBytes(v));
/** a connection after its login, so every message type is read */
const ctx = (): DecodeContext => ({
  now: new Date(Date.UTC(2026, 0, 1)),
  transport: 'tcp',
  checksum: 'accept',
  deviceId: '353456789012345',
  session: {},
});

const mutate = (rand: () => number, input: Buffer): Buffer =>
  mutateBytes(rand, input, { ending: '#', specials: [0x23, 0x2c, 0x7c, 0x26, 0x2d, 0x2e, 0x41, 0x56, 0x30] });

const check = (frame: Buffer): string | undefined => decodesSanely(() => trvProtocol.decode!(frame, ctx()));

test('trv.fuzz: mutated vector messages only ever throw ProtocolError, positions sane', (t) => {
  const rand = prng(0x5010);
  for (let i = 0; i < 20_000; i++) {
    const frame = mutate(rand, corpus[Math.floor(rand() * corpus.length)]);
    const problem = check(frame);
    if (problem) return t.fail(`${frame.toString('latin1')}: ${problem}`);
  }
  t.pass();
});

test('trv.fuzz: random bytes after each message type only ever throw ProtocolError', (t) => {
  const rand = prng(10);
  const types = ['AP00', 'AP01', 'AP02', 'AP03', 'AP10', 'AP49', 'APHT', 'APHP', 'AP50', 'CP01', 'YP03', 'YP14'];
  for (let i = 0; i < 10_000; i++) {
    const body = Buffer.from(Array.from({ length: Math.floor(rand() * 80) }, () => Math.floor(rand() * 256)));
    const head = Buffer.from(`IW${types[i % types.length]}`);
    const problem = check(Buffer.concat([head, body]));
    if (problem) return t.fail(`${head}${body.toString('hex')}: ${problem}`);
  }
  t.pass();
});

test('trv.fuzz: a hostile long Wi-Fi list does not backtrack for long', (t) => {
  const started = process.cpuUsage();
  const fix = 'IWAP01080524A2232.9806N11404.9355E000.1061830323.8706000908000102,460,0,9520,3671,';
  for (const tail of ['a|'.repeat(500), 'n|74-DE-2B-44-88-8C|9'.repeat(45), '1,'.repeat(500), 'x&'.repeat(500)]) {
    check(Buffer.from(fix + tail));
    check(Buffer.from(`IWAP02,zh,0,1,460,0,${'1|2|3,'.repeat(160)}x`));
  }
  t.true(cpuMsSince(started) < 2_000);
});

test('trv.fuzz: the splitter stays bounded on mutated streams and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(0x7e5);
  fuzzSplitter(t, {
    protocol: trvProtocol,
    rand,
    rounds: 3000,
    input: () => mutate(rand, corpus[Math.floor(rand() * corpus.length)]),
    decode: (f) => trvProtocol.decode!(f, ctx()),
    show: (f) => f.toString('latin1'),
  });
});
