import test from 'ava';
import { eelinkProtocol } from '../../../protocols/eelink/eelink.protocol.js';
import { frameBytes, loadVectors } from '../../helpers/vectors.js';

const [A, B] = loadVectors('eelink')
  .filter((v) => v.test_kind === 'decoder' && v.transport === 'tcp')
  .map(frameBytes);
const hex = (frames: Buffer[]): string[] => frames.map((f) => f.toString('hex'));

test('eelink.frame: a packet split across chunks, byte by byte, yields one frame', (t) => {
  const s = eelinkProtocol.createSplitter!();
  const out: Buffer[] = [];
  for (const b of A) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(hex(out), hex([A]));
  t.is(s.buffered, 0);
});

test('eelink.frame: two packets in one chunk yield two frames', (t) => {
  t.deepEqual(hex(eelinkProtocol.createSplitter!().push(Buffer.concat([A, B]))), hex([A, B]));
});

test('eelink.frame: garbage before a packet, and a 67 67 whose length cannot be a packet, are skipped', (t) => {
  const s = eelinkProtocol.createSplitter!();
  const garbage = Buffer.from('00ff0d0a6767010000', 'hex'); // length 0: no index
  t.deepEqual(hex(s.push(Buffer.concat([garbage, A, Buffer.from('zz'), B]))), hex([A, B]));
  t.is(s.buffered, 0);
});

test('eelink.frame: the buffer never holds more than the largest packet', (t) => {
  const s = eelinkProtocol.createSplitter!();
  t.deepEqual(s.push(Buffer.from('676712ffff', 'hex')), []);
  for (let i = 0; i < 40; i++) s.push(Buffer.alloc(2000, 0x20));
  t.true(s.buffered <= eelinkProtocol.maxFrameBytes);
});
