import test from 'ava';
import { createCastelSplitter } from '../../../protocols/castel/castel.frame.js';
import { MAX_FRAME_BYTES } from '../../../protocols/castel/castel.constants.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';

const HEARTBEAT = Buffer.from('40401F00043130303131313235323939383700000000000000100303320D0A', 'hex');
const MPIP = Buffer.from(
  '24243f00676e6768656636313031313132393030313734002001840d0000d2deb556020602100b35360456cf09e6ebac0200000000030000000001abc10d0a',
  'hex',
);
/** an SC alarm whose body holds `0D 0A` and `@@`-like bytes: only the length field ends it */
const ALARM = Buffer.from(
  '40406000043231334550323031363030303538350000000000400708000000831c1c58f4fb1c58ae94040012220000f604000058000000200007630168000084c401040b10090c3532db3f07f07f7520090100000101010e00000000c7920d0a',
  'hex',
);

const hex = (frames: Buffer[]): string[] => frames.map((f) => f.toString('hex'));

/** decoder vectors whose length field is the frame's size (one holds two frames: it yields two) */
const vectorFrames = loadVectors('castel')
  .filter((v) => v.test_kind === 'decoder')
  .map(frameBytes);

test('castel.frame: every vector frame survives byte-by-byte delivery', (t) => {
  for (const f of vectorFrames) {
    const s = createCastelSplitter();
    const out: Buffer[] = [];
    for (const b of f) out.push(...s.push(Buffer.from([b])));
    const length = f.readUInt16LE(2);
    t.is(out[0]?.toString('hex'), f.subarray(0, length).toString('hex'), f.subarray(0, 8).toString('hex'));
    t.is(Buffer.concat(out).length, f.length, 'nothing left behind');
  }
});

test('castel.frame: a frame split across two chunks is yielded once, whole', (t) => {
  const s = createCastelSplitter();
  t.deepEqual(s.push(ALARM.subarray(0, 40)), []);
  t.is(s.buffered, 40);
  t.deepEqual(hex(s.push(ALARM.subarray(40))), [ALARM.toString('hex')]);
  t.is(s.buffered, 0);
});

test('castel.frame: two frames in one chunk, and a frame with the start of the next', (t) => {
  const s = createCastelSplitter();
  t.deepEqual(hex(s.push(Buffer.concat([HEARTBEAT, MPIP]))), [HEARTBEAT.toString('hex'), MPIP.toString('hex')]);
  t.deepEqual(hex(s.push(Buffer.concat([ALARM, HEARTBEAT.subarray(0, 3)]))), [ALARM.toString('hex')]);
  t.is(s.buffered, 3);
  t.deepEqual(hex(s.push(HEARTBEAT.subarray(3))), [HEARTBEAT.toString('hex')]);
});

test('castel.frame: leading garbage and false headers are skipped', (t) => {
  const s = createCastelSplitter();
  const garbage = Buffer.from('00ff0d0a40234024244040', 'hex'); // `@@` with a length below the shortest frame
  t.deepEqual(hex(s.push(Buffer.concat([garbage, Buffer.from('0300', 'hex'), HEARTBEAT]))), [
    HEARTBEAT.toString('hex'),
  ]);
  t.deepEqual(hex(s.push(Buffer.concat([Buffer.from('deadbeef', 'hex'), MPIP]))), [MPIP.toString('hex')]);
  t.is(s.buffered, 0);
});

test('castel.frame: garbage alone is not kept; a header at the end is', (t) => {
  const s = createCastelSplitter();
  t.deepEqual(s.push(Buffer.alloc(1000, 0x55)), []);
  t.is(s.buffered, 0);
  t.deepEqual(s.push(Buffer.from('01020340', 'hex')), []);
  t.is(s.buffered, 1, 'a possible header start is kept');
});

test('castel.frame: a length over the limit is garbage, and waiting stays within the limit', (t) => {
  const s = createCastelSplitter(256);
  t.deepEqual(hex(s.push(Buffer.concat([Buffer.from('4040ff0f04', 'hex'), HEARTBEAT]))), [HEARTBEAT.toString('hex')]);
  t.deepEqual(s.push(Buffer.from('4040f000', 'hex')), [], '240 bytes announced: wait');
  t.is(s.buffered, 4);
  s.push(Buffer.alloc(300, 0x11));
  t.true(s.buffered <= 256);
  t.deepEqual(hex(s.push(HEARTBEAT)), [HEARTBEAT.toString('hex')]);
  const big = createCastelSplitter();
  for (let i = 0; i < 100; i++) {
    big.push(Buffer.from('4040ffff', 'hex'));
    big.push(Buffer.alloc(1000, 0x40));
    t.true(big.buffered <= MAX_FRAME_BYTES);
  }
});
