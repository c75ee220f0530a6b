import test from 'ava';
import { cpuMsSince } from '../../helpers/wait.js';
import { h02Protocol } from '../../../protocols/h02/h02.protocol.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { prng } from '../../helpers/fuzz.js';

const corpus = loadVectors('h02')
  .filter((v) => v.test_kind !== 'encoder')
  .map((v) => frameBytes(v));

const ctx = (): DecodeContext => ({
  now: new Date(Date.UTC(2026, 0, 1)),
  transport: 'tcp',
  checksum: 'accept',
  session: {},
});

function mutate(rand: () => number, input: Buffer): Buffer {
  const int = (n: number) => Math.floor(rand() * n);
  let b = Buffer.from(input);
  const rounds = 1 + int(4);
  for (let r = 0; r < rounds; r++) {
    switch (int(6)) {
      case 0: // bit flips
        for (let i = 0; i < 1 + int(4) && b.length; i++) b[int(b.length)] ^= 1 << int(8);
        break;
      case 1: // truncation
        b = b.subarray(0, int(b.length + 1));
        break;
      case 2: // insertion of a real frame
        b = Buffer.concat([
          b.subarray(0, int(b.length + 1)),
          corpus[int(corpus.length)],
          b.subarray(int(b.length + 1)),
        ]);
        break;
      case 3: // random bytes
        b = Buffer.concat([b, Buffer.from(Array.from({ length: int(64) }, () => int(256)))]);
        break;
      case 4: // a field separator or marker dropped in
        if (b.length) b[int(b.length)] = [0x2c, 0x23, 0x2a, 0x24, 0x58, 0x2d, 0x2e][int(7)];
        break;
      default: // a byte removed
        if (b.length) {
          const at = int(b.length);
          b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1)]);
        }
    }
  }
  return b;
}

function decodeOrProtocolError(frame: Buffer): void {
  try {
    const r = h02Protocol.decode!(frame, ctx());
    for (const m of r.messages) {
      const l = m.location;
      if (
        l &&
        (!Number.isFinite(l.latitudeDeg) ||
          !Number.isFinite(l.longitudeDeg) ||
          Math.abs(l.latitudeDeg) > 90 ||
          Math.abs(l.longitudeDeg) > 180)
      ) {
        throw new Error(`bad coordinates from ${frame.toString('hex')}`);
      }
      if (m.fixTime && Number.isNaN(m.fixTime.getTime())) throw new Error(`invalid date from ${frame.toString('hex')}`);
    }
  } catch (e) {
    if (!(e instanceof ProtocolError)) throw e;
  }
}

test('h02.fuzz: mutated vector frames only ever throw ProtocolError', (t) => {
  const rand = prng(0x4802);
  const started = process.cpuUsage();
  for (let i = 0; i < 20_000; i++) {
    const frame = mutate(rand, corpus[Math.floor(rand() * corpus.length)]);
    t.notThrows(() => decodeOrProtocolError(frame), frame.toString('hex'));
  }
  t.true(cpuMsSince(started) < 20_000, 'finishes quickly');
});

test('h02.fuzz: random bytes only ever throw ProtocolError', (t) => {
  const rand = prng(7);
  for (let i = 0; i < 10_000; i++) {
    const length = Math.floor(rand() * 80);
    const frame = Buffer.from(Array.from({ length }, () => Math.floor(rand() * 256)));
    if (length) frame[0] = [0x2a, 0x24, 0x58, 0x00][Math.floor(rand() * 4)];
    t.notThrows(() => decodeOrProtocolError(frame));
  }
});

test('h02.fuzz: the splitter stays bounded on mutated streams and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(99);
  const started = process.cpuUsage();
  for (let run = 0; run < 300; run++) {
    const max = 64 + Math.floor(rand() * 1000);
    const splitter = h02Protocol.createSplitter!(max);
    const parts: Buffer[] = [];
    for (let i = 0; i < 20; i++)
      parts.push(
        rand() < 0.5
          ? corpus[Math.floor(rand() * corpus.length)]
          : mutate(rand, corpus[Math.floor(rand() * corpus.length)]),
      );
    const stream = Buffer.concat(parts);
    for (let at = 0; at < stream.length; ) {
      const size = 1 + Math.floor(rand() * 120);
      for (const frame of splitter.push(stream.subarray(at, at + size))) {
        t.true(frame.length <= Math.max(max, 46));
        decodeOrProtocolError(frame);
      }
      t.true(splitter.buffered <= Math.max(max, 46), `buffered ${splitter.buffered} <= ${max}`);
      at += size;
    }
  }
  t.true(cpuMsSince(started) < 20_000, 'finishes quickly');
});
