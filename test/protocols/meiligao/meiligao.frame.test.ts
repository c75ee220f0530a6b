import test from 'ava';
import { meiligaoProtocol } from '../../../protocols/meiligao/meiligao.protocol.js';
import { frameBytes, loadVectors } from '../../helpers/vectors.js';

// frames whose length field is right (older captures write 0 there and are decoder-only vectors)
const [A, B] = loadVectors('meiligao')
  .filter((v) => v.test_kind === 'decoder')
  .map(frameBytes)
  .filter((f) => f.readUInt16BE(2) === f.length);
const hex = (frames: Buffer[]): string[] => frames.map((f) => f.toString('hex'));

test('meiligao.frame: a frame split across chunks, byte by byte, yields one frame', (t) => {
  const s = meiligaoProtocol.createSplitter!();
  const out: Buffer[] = [];
  for (const b of A) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(hex(out), hex([A]));
  t.is(s.buffered, 0);
});

test('meiligao.frame: two frames in one chunk yield two frames', (t) => {
  t.deepEqual(hex(meiligaoProtocol.createSplitter!().push(Buffer.concat([A, B]))), hex([A, B]));
});

test('meiligao.frame: bytes before a "$" are dropped, and a "$" whose length cannot be a frame is skipped', (t) => {
  const s = meiligaoProtocol.createSplitter!();
  const garbage = Buffer.from('0d0a00ff24240000', 'hex'); // a "$$" with length 0
  t.deepEqual(hex(s.push(Buffer.concat([garbage, A, Buffer.from('xx'), B]))), hex([A, B]));
  t.is(s.buffered, 0);
});

test('meiligao.frame: the buffer never holds more than the largest frame', (t) => {
  const s = meiligaoProtocol.createSplitter!();
  t.deepEqual(s.push(Buffer.from('2424ffff', 'hex')), []);
  for (let i = 0; i < 40; i++) s.push(Buffer.alloc(2000, 0x20));
  t.true(s.buffered <= meiligaoProtocol.maxFrameBytes);
  t.true(s.buffered < 4, 'cut at its length; the spaces after it are not a frame start and are dropped');
});

test('meiligao.frame: "@@" frames (some devices send OBD data so) are cut too', (t) => {
  const obd = Buffer.from(
    '4040005066104020094432990131302E312C302C3135362C302E30302C31392E36312C2D33342C33342E32362C32312E38332C372E39312C313033332C322E36392C362E35352C302C302C309DBF0D0A',
    'hex',
  );
  t.deepEqual(hex(meiligaoProtocol.createSplitter!().push(Buffer.concat([Buffer.from('@x'), obd, A]))), hex([obd, A]));
});
