import test from 'ava';
import { minifinder2Protocol } from '../../../protocols/minifinder2/minifinder2.protocol.js';
import { frameBytes, loadVectors } from '../../helpers/vectors.js';

const frames = loadVectors('minifinder2')
  .filter((v) => v.test_kind === 'decoder')
  .map(frameBytes)
  // frames whose length field covers exactly what follows the header
  .filter((f) => f.length === 8 + f.readUInt16LE(2));
const [A, B] = frames.filter((f) => f.length < 100);
const hex = (list: Buffer[]): string[] => list.map((f) => f.toString('hex'));

test('minifinder2.frame: the vector frames are whole frames by their length field', (t) => {
  t.true(frames.length >= 10);
  for (const f of frames) t.deepEqual(hex(minifinder2Protocol.createSplitter!().push(f)), hex([f]));
});

test('minifinder2.frame: a frame split across chunks, byte by byte, yields one frame', (t) => {
  const s = minifinder2Protocol.createSplitter!();
  const out: Buffer[] = [];
  for (const b of A) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(hex(out), hex([A]));
  t.is(s.buffered, 0);
});

test('minifinder2.frame: two frames in one chunk yield two frames', (t) => {
  t.deepEqual(hex(minifinder2Protocol.createSplitter!().push(Buffer.concat([A, B]))), hex([A, B]));
});

test('minifinder2.frame: bytes before a 0xAB header are skipped', (t) => {
  const s = minifinder2Protocol.createSplitter!();
  t.deepEqual(hex(s.push(Buffer.concat([Buffer.from('00ff0d0a', 'hex'), A]))), hex([A]));
});

test('minifinder2.frame: a length beyond the limit is no frame start; the buffer stays bounded', (t) => {
  const small = minifinder2Protocol.createSplitter!(64);
  t.deepEqual(hex(small.push(Buffer.concat([Buffer.from('ab10ff00', 'hex'), A]))), hex([A]));
  const s = minifinder2Protocol.createSplitter!();
  t.deepEqual(s.push(Buffer.from('ab10ffff', 'hex')), []);
  s.push(Buffer.alloc(70_000, 0xab));
  t.true(s.buffered <= minifinder2Protocol.maxFrameBytes);
});
