import test from 'ava';
import { protocols } from '../../protocols/index.js';
import { ProtocolError, type DecodeResult } from '../../protocols/types.js';
import { loadVectors, type Vector } from '../helpers/vectors.js';
import { decodeVector } from '../helpers/vector-runner.js';

// CONTRIBUTING.md convention 4: every decoded position of every protocol passes the same sanity checks.
const NOW = new Date();

/**
 * The decoder vectors a decoder refuses as malformed (ProtocolError), with the test that says why:
 * any other throw, or a refusal of any other vector, fails the test (a crash was once taken for no position).
 */
const REFUSED: Readonly<Record<string, readonly number[]>> = {
  teltonika: [36], // needs Traccar's teltonika.extended: test/protocols/teltonika/teltonika.decoder.test.ts
  suntech: [1], // a binary zip report, layout unknown: test/protocols/suntech/suntech.decoder.test.ts
};

function decoded(name: string, v: Vector): DecodeResult | undefined {
  // a vector of which Traccar's decoder returns nothing may be a frame trackgate refuses as malformed
  const mayRefuse = REFUSED[name]?.includes(v.line) || v.expect.assert === 'null';
  if (!mayRefuse) return decodeVector(protocols[name], v, NOW);
  try {
    decodeVector(protocols[name], v, NOW);
  } catch (e) {
    if (e instanceof ProtocolError) return undefined;
    throw e;
  }
  if (v.expect.assert === 'null' && !REFUSED[name]?.includes(v.line)) return decodeVector(protocols[name], v, NOW);
  throw new Error(`${name} line ${v.line} decodes now: take it off REFUSED`);
}

for (const name of Object.keys(protocols)) {
  test(`${name}: every decoded position passes the shared invariants`, (t) => {
    let checked = 0;
    for (const v of loadVectors(name).filter((x) => x.test_kind === 'decoder')) {
      const result = decoded(name, v);
      for (const m of result?.messages ?? []) {
        if (m.fixTime) {
          t.true(m.fixTime.getTime() > Date.UTC(2000, 0, 1) || !m.location, `line ${v.line}: fix time after 2000`);
          t.true(m.fixTime.getTime() < NOW.getTime() + 25 * 3600_000, `line ${v.line}: fix time under 25 h ahead`);
        }
        const l = m.location;
        if (!l) continue;
        checked++;
        t.true(Math.abs(l.latitudeDeg) <= 90, `line ${v.line}: |lat| <= 90`);
        t.true(Math.abs(l.longitudeDeg) <= 180, `line ${v.line}: |lon| <= 180`);
        if (l.speedKmh !== undefined) t.true(l.speedKmh >= 0, `line ${v.line}: speed >= 0`);
        if (l.courseDeg !== undefined) t.true(l.courseDeg >= 0 && l.courseDeg <= 360, `line ${v.line}: course 0-360`);
      }
    }
    t.true(checked > 0, 'at least one position was checked');
  });
}
