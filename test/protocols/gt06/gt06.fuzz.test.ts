import test from 'ava';
import { cpuMsSince } from '../../helpers/wait.js';
import { gt06Protocol } from '../../../protocols/gt06/gt06.protocol.js';
import { createGt06Splitter, GT06_MAX_FRAME_BYTES } from '../../../protocols/gt06/gt06.frame.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { prng } from '../../helpers/fuzz.js';

const decode = gt06Protocol.decode!;
const MODELS = [undefined, 'LW4G', 'SEEWORLD', 'XT40', 'NT20', 'VL103', 'G18', 'R11', 'QH302R'];

const vectorFrames = loadVectors('gt06')
  .filter((v) => v.test_kind !== 'encoder' && typeof v.frame === 'string')
  .map(frameBytes);

function randomBytes(rand: () => number, n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256);
  return b;
}

function mutate(rand: () => number, src: Buffer): Buffer {
  let b = Buffer.from(src);
  const ops = 1 + Math.floor(rand() * 4);
  for (let i = 0; i < ops; i++) {
    const kind = Math.floor(rand() * 5);
    const at = Math.floor(rand() * (b.length + 1));
    if (kind === 0 && b.length) b[Math.min(at, b.length - 1)] ^= 1 << Math.floor(rand() * 8);
    else if (kind === 1) b = b.subarray(0, at);
    else if (kind === 2)
      b = Buffer.concat([b.subarray(0, at), randomBytes(rand, 1 + Math.floor(rand() * 8)), b.subarray(at)]);
    else if (kind === 3 && b.length > 4)
      b[2 + Math.floor(rand() * 2)] = Math.floor(rand() * 256); // length field
    else b = Buffer.concat([b.subarray(0, at), vectorFrames[Math.floor(rand() * vectorFrames.length)], b.subarray(at)]);
  }
  return b;
}

function ctxFor(rand: () => number): DecodeContext {
  const session: Record<string, unknown> = {};
  const model = MODELS[Math.floor(rand() * MODELS.length)];
  if (rand() < 0.3) session['gt06.tzOffsetMin'] = Math.floor(rand() * 1440) - 720;
  return {
    now: new Date(Date.UTC(2026, 0, 1)),
    transport: 'tcp',
    checksum: rand() < 0.2 ? 'strict' : 'accept',
    session,
    ...(model && { model }),
  };
}

function decodeOnlyProtocolErrors(frame: Buffer, ctx: DecodeContext): boolean {
  try {
    const r = decode(frame, ctx);
    for (const m of r.messages) {
      if (m.fixTime && Number.isNaN(m.fixTime.getTime())) throw new Error('invalid fix time');
      JSON.stringify(m);
    }
    return true;
  } catch (e) {
    if (e instanceof ProtocolError) return false;
    throw new Error(`${(e as Error).name}: ${(e as Error).message} on ${frame.toString('hex')}`);
  }
}

test('gt06.fuzz: mutated vector frames only ever throw ProtocolError', (t) => {
  const rand = prng(0x6d7406);
  const started = process.cpuUsage();
  let decoded = 0;
  for (let i = 0; i < 20_000; i++) {
    const frame = mutate(rand, vectorFrames[i % vectorFrames.length]);
    if (decodeOnlyProtocolErrors(frame, ctxFor(rand))) decoded++;
  }
  t.true(decoded > 1000, `some mutated frames still decode (${decoded})`);
  t.true(cpuMsSince(started) < 20_000, 'finishes quickly');
});

test('gt06.fuzz: random frames with a valid start only ever throw ProtocolError', (t) => {
  const rand = prng(42);
  for (let i = 0; i < 20_000; i++) {
    const body = randomBytes(rand, Math.floor(rand() * 80));
    const start = rand() < 0.5 ? Buffer.from([0x78, 0x78]) : Buffer.from([0x79, 0x79]);
    const tail = rand() < 0.7 ? Buffer.from([0x0d, 0x0a]) : Buffer.alloc(0);
    decodeOnlyProtocolErrors(Buffer.concat([start, body, tail]), ctxFor(rand));
  }
  t.pass();
});

test('gt06.fuzz: the splitter stays bounded on random and mutated streams and its frames decode safely', (t) => {
  const rand = prng(7);
  const started = process.cpuUsage();
  for (let round = 0; round < 200; round++) {
    const s = createGt06Splitter();
    const ctx = ctxFor(rand);
    for (let i = 0; i < 50; i++) {
      const r = rand();
      const chunk =
        r < 0.3
          ? randomBytes(rand, Math.floor(rand() * 600))
          : r < 0.8
            ? mutate(rand, vectorFrames[Math.floor(rand() * vectorFrames.length)])
            : Buffer.alloc(Math.floor(rand() * 3000), rand() < 0.5 ? 0x78 : 0x79);
      for (const frame of s.push(chunk)) {
        t.true(frame.length <= GT06_MAX_FRAME_BYTES);
        decodeOnlyProtocolErrors(frame, ctx);
      }
      if (s.buffered > GT06_MAX_FRAME_BYTES) t.fail(`buffered ${s.buffered}`);
    }
  }
  t.true(cpuMsSince(started) < 20_000, 'finishes quickly');
});

test('gt06.fuzz: a smaller splitter limit is honoured', (t) => {
  const rand = prng(99);
  const s = createGt06Splitter(256);
  for (let i = 0; i < 2000; i++) {
    s.push(rand() < 0.5 ? randomBytes(rand, 300) : Buffer.from('7979ffff', 'hex'));
    if (s.buffered > 256) t.fail(`buffered ${s.buffered}`);
  }
  t.pass();
});
