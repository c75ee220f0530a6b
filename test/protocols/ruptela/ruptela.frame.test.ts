import test from 'ava';
import { ruptelaProtocol } from '../../../protocols/ruptela/ruptela.protocol.js';
import { frameBytes, loadVectors } from '../../helpers/vectors.js';

const [A, B] = loadVectors('ruptela')
  .filter((v) => v.test_kind === 'decoder' && v.msg_type?.startsWith('1 '))
  .slice(1)
  .map(frameBytes);
const hex = (frames: Buffer[]): string[] => frames.map((f) => f.toString('hex'));

test('ruptela.frame: a packet split across chunks, byte by byte, yields one frame', (t) => {
  const s = ruptelaProtocol.createSplitter!();
  const out: Buffer[] = [];
  for (const b of A) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(hex(out), hex([A]));
  t.is(s.buffered, 0);
});

test('ruptela.frame: two packets in one chunk yield two frames', (t) => {
  t.deepEqual(hex(ruptelaProtocol.createSplitter!().push(Buffer.concat([A, B]))), hex([A, B]));
});

test('ruptela.frame: leading bytes whose length cannot be a packet (under 9 or over the limit) are skipped', (t) => {
  const s = ruptelaProtocol.createSplitter!();
  t.deepEqual(hex(s.push(Buffer.concat([Buffer.from('fffffe', 'hex'), A]))), hex([A]));
});

test('ruptela.frame: the buffer never holds more than the largest packet', (t) => {
  const s = ruptelaProtocol.createSplitter!();
  t.deepEqual(s.push(Buffer.from('07ff', 'hex')), []);
  s.push(Buffer.alloc(1000));
  t.true(s.buffered <= ruptelaProtocol.maxFrameBytes);
});
