import test from 'ava';
import { teltonikaProtocol } from '../../../protocols/teltonika/teltonika.protocol.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';

const avl = loadVectors('teltonika')
  .filter(
    (v) =>
      v.test_kind === 'decoder' && v.transport === 'tcp' && v.crc_ok === true && String(v.frame).startsWith('00000000'),
  )
  .map(frameBytes);
const login = Buffer.from('000f333536333037303432343431303133', 'hex');
const ping = Buffer.from([0xff]);
const split = () => teltonikaProtocol.createSplitter!();
const hex = (frames: Buffer[]): string[] => frames.map((f) => f.toString('hex'));

test('teltonika.frame: a login, a ping and an AVL packet in one chunk yield three frames', (t) => {
  t.deepEqual(hex(split().push(Buffer.concat([login, ping, avl[0]]))), hex([login, ping, avl[0]]));
});

test('teltonika.frame: two AVL packets in one chunk yield two frames', (t) => {
  const s = split();
  t.deepEqual(hex(s.push(Buffer.concat([avl[0], avl[1]]))), hex([avl[0], avl[1]]));
  t.is(s.buffered, 0);
});

test('teltonika.frame: a packet split across chunks is held until complete', (t) => {
  const s = split();
  const f = avl[2];
  t.deepEqual(s.push(f.subarray(0, 5)), []);
  t.deepEqual(s.push(f.subarray(5, 40)), []);
  t.is(s.buffered, 40);
  t.deepEqual(hex(s.push(f.subarray(40))), hex([f]));
  t.is(s.buffered, 0);
});

test('teltonika.frame: fed byte by byte, every frame comes out once and whole', (t) => {
  const s = split();
  const stream = Buffer.concat([login, ...avl.slice(0, 5), ping]);
  const out: Buffer[] = [];
  for (const b of stream) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(hex(out), hex([login, ...avl.slice(0, 5), ping]));
});

test('teltonika.frame: leading garbage is skipped and the stream resynchronises', (t) => {
  const garbage = Buffer.from('474554202f20485454502f312e310d0a0102030000000501', 'hex');
  t.deepEqual(hex(split().push(Buffer.concat([garbage, login, avl[0]]))), hex([login, avl[0]]));
});

test('teltonika.frame: garbage between frames is skipped', (t) => {
  const s = split();
  t.deepEqual(hex(s.push(Buffer.concat([avl[0], Buffer.from('deadbeef0d0a', 'hex'), avl[1]]))), hex([avl[0], avl[1]]));
});

test('teltonika.frame: an absurd length field is not buffered beyond maxFrameBytes', (t) => {
  const s = split();
  const bogus = Buffer.from('000000004000000008', 'hex');
  t.deepEqual(s.push(bogus), []);
  t.true(s.buffered <= teltonikaProtocol.maxFrameBytes);
  const big = Buffer.alloc(teltonikaProtocol.maxFrameBytes * 3, 0x41);
  t.deepEqual(s.push(big), []);
  t.true(s.buffered <= teltonikaProtocol.maxFrameBytes);
  t.deepEqual(hex(s.push(avl[0])), hex([avl[0]]));
});

test('teltonika.frame: a length just under the limit waits, and never holds more than maxFrameBytes', (t) => {
  const s = teltonikaProtocol.createSplitter!(1024);
  const head = Buffer.from('00000000000003f408', 'hex'); // 1012 + 12 = 1024 bytes
  t.deepEqual(s.push(head), []);
  t.deepEqual(s.push(Buffer.alloc(1000)), []);
  t.true(s.buffered <= 1024);
});
