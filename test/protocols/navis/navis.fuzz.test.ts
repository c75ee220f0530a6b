import test from 'ava';
import { navisProtocol } from '../../../protocols/navis/navis.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { decodesSanely, fuzzSplitter, mutateBytes, prng } from '../../helpers/fuzz.js';
import { frameBytes, loadVectors } from '../../helpers/vectors.js';
import { BASIC_FIELDS, negotiation } from '../../helpers/navis-frames.js';

const decode = navisProtocol.decode!;
const vectors = loadVectors('navis').filter((v) => v.test_kind !== 'encoder');
const corpus = vectors.map((v) => frameBytes(v));
/** the negotiations of the vectors, so FLEX packets meet a layout as they do on a connection */
const layouts = [
  ...vectors.flatMap((v) => (v.requires_prior ?? []).map((p) => Buffer.from(p.frame, 'hex'))),
  negotiation(BASIC_FIELDS),
  negotiation(Array.from({ length: 255 }, (_, i) => i)),
].filter((f) => f.subarray(16, 22).toString('latin1') === '*>FLEX');

/** a session that named its device and negotiated one of the layouts */
function ctx(rand: () => number): DecodeContext {
  const c: DecodeContext = {
    now: new Date(Date.UTC(2026, 0, 1)),
    transport: 'tcp',
    checksum: 'accept',
    session: {},
    deviceId: '866795031410689',
  };
  decode(layouts[Math.floor(rand() * layouts.length)], c);
  return c;
}

const mutate = (rand: () => number, input: Buffer): Buffer =>
  mutateBytes(rand, input, { ending: '~', specials: [0x7e, 0x40, 0x7f, 0x00, 0xff, 0x0a] });

test('navis.fuzz: mutated vector frames only ever throw ProtocolError, and positions are sane', (t) => {
  const rand = prng(0x4e54);
  for (let i = 0; i < 20_000; i++) {
    const frame = mutate(rand, corpus[Math.floor(rand() * corpus.length)]);
    const c = ctx(rand);
    const problem = decodesSanely(() => decode(frame, c));
    if (problem) return t.fail(`${frame.toString('hex')}: ${problem}`);
  }
  t.pass();
});

test('navis.fuzz: random FLEX and NTCB payloads only ever throw ProtocolError', (t) => {
  const rand = prng(0x464c);
  const heads = ['~A', '~T', '~C', '~E', '~X'];
  for (let i = 0; i < 10_000; i++) {
    const body = Buffer.from(Array.from({ length: Math.floor(rand() * 200) }, () => Math.floor(rand() * 256)));
    const frame =
      rand() < 0.7
        ? Buffer.concat([Buffer.from(heads[Math.floor(rand() * heads.length)]), body])
        : Buffer.concat([
            Buffer.from('@NTC'),
            Buffer.alloc(8),
            Buffer.from([body.length + 4, 0, 0, 0]),
            Buffer.from('*>' + 'ATF'[Math.floor(rand() * 3)]),
            Buffer.from([Math.floor(rand() * 7)]),
            body,
          ]);
    const c = ctx(rand);
    const problem = decodesSanely(() => decode(frame, c));
    if (problem) return t.fail(`${frame.toString('hex')}: ${problem}`);
  }
  t.pass();
});

test('navis.fuzz: the splitter stays bounded on mutated streams and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(0x7e);
  const c = ctx(rand);
  fuzzSplitter(t, {
    protocol: navisProtocol,
    rand,
    rounds: 3000,
    input: (i) =>
      i % 50 === 0 ? layouts[i % layouts.length] : mutate(rand, corpus[Math.floor(rand() * corpus.length)]),
    decode: (f) => decode(f, c),
    show: (f) => f.toString('hex'),
  });
});
