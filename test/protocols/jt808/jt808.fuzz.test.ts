import test from 'ava';
import { cpuMsSince } from '../../helpers/wait.js';
import { jt808Protocol } from '../../../protocols/jt808/jt808.protocol.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { frameBytes, loadVectors } from '../../helpers/vectors.js';
import { prng } from '../../helpers/fuzz.js';

const REAL = loadVectors('jt808')
  .filter((v) => v.test_kind === 'decoder')
  .map(frameBytes);
const MODELS = [undefined, 'GL100', 'JC371', 'MV710G', 'G-360P', 'VL300', 'C5', 'G1C Pro'];

function mutate(frame: Buffer, rand: () => number): Buffer {
  const out = Buffer.from(frame);
  const kind = Math.floor(rand() * 5);
  if (kind === 0 && out.length) {
    for (let i = 0; i < 1 + rand() * 4; i++) out[Math.floor(rand() * out.length)] ^= 1 << Math.floor(rand() * 8);
    return out;
  }
  if (kind === 1) return out.subarray(0, Math.floor(rand() * out.length));
  if (kind === 2) {
    const at = Math.floor(rand() * out.length);
    const junk = Buffer.from(Array.from({ length: 1 + Math.floor(rand() * 8) }, () => Math.floor(rand() * 256)));
    return Buffer.concat([out.subarray(0, at), junk, out.subarray(at)]);
  }
  if (kind === 3 && out.length > 20) {
    out.writeUInt16BE(Math.floor(rand() * 0x10000), 3); // random attribute (length, version, packets)
    return out;
  }
  return Buffer.from(Array.from({ length: Math.floor(rand() * 200) }, () => Math.floor(rand() * 256)));
}

function decodeSafely(t: import('ava').ExecutionContext, frame: Buffer, ctx: DecodeContext): void {
  try {
    const result = jt808Protocol.decode!(frame, ctx);
    for (const m of result.messages) {
      if (m.location) {
        t.true(Math.abs(m.location.latitudeDeg) <= 90 && Math.abs(m.location.longitudeDeg) <= 180);
        if (m.location.courseDeg !== undefined) t.true(m.location.courseDeg >= 0 && m.location.courseDeg <= 360);
      }
    }
  } catch (error) {
    if (!(error instanceof ProtocolError)) t.fail(`${String(error)} on ${frame.toString('hex')}`);
  }
}

test('jt808.fuzz: mutated real frames decode or throw ProtocolError, quickly', (t) => {
  const rand = prng(808);
  const started = process.cpuUsage();
  for (let i = 0; i < 20000; i++) {
    const base = REAL[Math.floor(rand() * REAL.length)];
    const model = MODELS[Math.floor(rand() * MODELS.length)];
    const ctx: DecodeContext = {
      now: new Date(0),
      transport: 'tcp',
      checksum: rand() < 0.5 ? 'accept' : 'strict',
      session: {},
      ...(model && { model }),
    };
    decodeSafely(t, mutate(base, rand), ctx);
  }
  t.true(cpuMsSince(started) < 20_000, 'finishes in time');
});

test('jt808.fuzz: the splitter stays bounded on random and mutated streams, and its frames decode safely', (t) => {
  const rand = prng(5015);
  const max = 512;
  const splitter = jt808Protocol.createSplitter!(max);
  const ctx: DecodeContext = { now: new Date(0), transport: 'tcp', checksum: 'accept', session: {} };
  const started = process.cpuUsage();
  for (let i = 0; i < 5000; i++) {
    const pick = rand();
    const chunk =
      pick < 0.4
        ? REAL[Math.floor(rand() * REAL.length)]
        : pick < 0.8
          ? mutate(REAL[Math.floor(rand() * REAL.length)], rand)
          : Buffer.from(Array.from({ length: Math.floor(rand() * 3000) }, () => Math.floor(rand() * 256)));
    let offset = 0;
    while (offset < chunk.length) {
      const size = 1 + Math.floor(rand() * 64);
      for (const frame of splitter.push(chunk.subarray(offset, offset + size))) decodeSafely(t, frame, ctx);
      offset += size;
      t.true(splitter.buffered <= max, `buffered ${splitter.buffered}`);
    }
  }
  t.true(cpuMsSince(started) < 30_000, 'finishes in time');
});
