import test from 'ava';
import { galileoProtocol } from '../../../protocols/galileo/galileo.protocol.js';
import { frameBytes, loadVectors } from '../../helpers/vectors.js';

const decoderFrames = loadVectors('galileo')
  .filter((v) => v.test_kind === 'decoder')
  .map(frameBytes);
const [A, B] = decoderFrames.filter((f) => f[0] === 0x01 && f.length < 200);
const IRIDIUM = loadVectors('galileo')
  .filter((v) => v.msg_type?.startsWith('Iridium'))
  .map(frameBytes)[0];
const PHOTO = decoderFrames.find((f) => f[0] === 0x07)!;
const hex = (frames: Buffer[]): string[] => frames.map((f) => f.toString('hex'));

test('galileo.frame: a packet split across chunks, byte by byte, yields one frame', (t) => {
  const s = galileoProtocol.createSplitter!();
  const out: Buffer[] = [];
  for (const b of A) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(hex(out), hex([A]));
  t.is(s.buffered, 0);
});

test('galileo.frame: two packets, a photo part and an Iridium message in one chunk yield four frames', (t) => {
  t.deepEqual(
    hex(galileoProtocol.createSplitter!().push(Buffer.concat([A, PHOTO, IRIDIUM, B]))),
    hex([A, PHOTO, IRIDIUM, B]),
  );
});

test('galileo.frame: the archive flag (top bit of the length) is not part of the length', (t) => {
  const archived = Buffer.from('011380033836383230343030313534393038370432008590', 'hex');
  t.deepEqual(hex(galileoProtocol.createSplitter!().push(Buffer.concat([archived, A]))), hex([archived, A]));
});

test('galileo.frame: bytes that are no packet header are skipped', (t) => {
  const s = galileoProtocol.createSplitter!();
  t.deepEqual(hex(s.push(Buffer.concat([Buffer.from('ff0a0d2455', 'hex'), A]))), hex([A]));
});

test('galileo.frame: the buffer never holds more than the largest packet', (t) => {
  const s = galileoProtocol.createSplitter!();
  const small = galileoProtocol.createSplitter!(64);
  t.deepEqual(small.push(Buffer.from('01ff00', 'hex')), []);
  t.deepEqual(hex(small.push(Buffer.concat([Buffer.alloc(100), A.subarray(0, 40)]))), []);
  t.true(small.buffered <= 64);
  t.deepEqual(s.push(Buffer.from('01ff7f', 'hex')), []);
  s.push(Buffer.alloc(40_000));
  t.true(s.buffered <= galileoProtocol.maxFrameBytes);
});
