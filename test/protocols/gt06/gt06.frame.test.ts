import test from 'ava';
import { createGt06Splitter, GT06_MAX_FRAME_BYTES } from '../../../protocols/gt06/gt06.frame.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';

const LOGIN = Buffer.from('78780d01012345678901234500018cdd0d0a', 'hex');
const STATUS = Buffer.from('7878131340b2fa000201040000000000011c00400e550d0a', 'hex');
const GPS = Buffer.from('787822221106160a1016c60278019407c7783800040001940504700046fc0103010006413c0d0a', 'hex');
/** 0x7979 frame with `0D 0A` inside its data (external device text "D7520A62\r\n") */
const SERIAL_CRLF = Buffer.from('797900109b0344373532304136320d0a000f87f00d0a', 'hex');

const hex = (frames: Buffer[]): string[] => frames.map((f) => f.toString('hex'));

/** well-formed decoder frames: the length field matches and 0D 0A ends them */
function wellFormedFrames(): Buffer[] {
  return loadVectors('gt06')
    .filter((v) => v.test_kind === 'decoder')
    .map(frameBytes)
    .filter((b) => {
      const declared = b[0] === 0x79 ? 6 + b.readUInt16BE(2) : 5 + b[2];
      return declared === b.length && b[b.length - 2] === 0x0d && b[b.length - 1] === 0x0a;
    });
}

test('gt06.frame: a frame split across two chunks is yielded once, whole', (t) => {
  const s = createGt06Splitter();
  t.deepEqual(s.push(GPS.subarray(0, 9)), []);
  t.is(s.buffered, 9);
  t.deepEqual(hex(s.push(GPS.subarray(9))), [GPS.toString('hex')]);
  t.is(s.buffered, 0);
});

test('gt06.frame: every well-formed vector frame survives byte-by-byte delivery', (t) => {
  const frames = wellFormedFrames();
  t.true(frames.length > 80);
  for (const f of frames) {
    // a 0x7878 frame with 0D 0A inside its data would be cut there, as Traccar does (none in the vectors)
    const s = createGt06Splitter();
    const out: Buffer[] = [];
    for (const b of f) out.push(...s.push(Buffer.from([b])));
    t.deepEqual(hex(out), [f.toString('hex')], f.subarray(0, 8).toString('hex'));
  }
});

test('gt06.frame: a 0x7979 frame with 0D 0A in its data is not cut short', (t) => {
  const s = createGt06Splitter();
  t.deepEqual(s.push(SERIAL_CRLF.subarray(0, 16)), []);
  t.deepEqual(hex(s.push(SERIAL_CRLF.subarray(16))), [SERIAL_CRLF.toString('hex')]);
});

test('gt06.frame: two frames in one chunk yield two frames', (t) => {
  const s = createGt06Splitter();
  t.deepEqual(hex(s.push(Buffer.concat([LOGIN, STATUS]))), [LOGIN.toString('hex'), STATUS.toString('hex')]);
  t.is(s.buffered, 0);
});

test('gt06.frame: a frame and the start of the next are split where the first ends', (t) => {
  const s = createGt06Splitter();
  t.deepEqual(hex(s.push(Buffer.concat([LOGIN, GPS.subarray(0, 20)]))), [LOGIN.toString('hex')]);
  t.is(s.buffered, 20);
  t.deepEqual(hex(s.push(Buffer.concat([GPS.subarray(20), SERIAL_CRLF]))), [
    GPS.toString('hex'),
    SERIAL_CRLF.toString('hex'),
  ]);
});

test('gt06.frame: leading garbage is skipped', (t) => {
  const s = createGt06Splitter();
  const garbage = Buffer.from('00ff0d0a7812340d0a79', 'hex');
  t.deepEqual(hex(s.push(Buffer.concat([garbage, LOGIN]))), [LOGIN.toString('hex')]);
  t.deepEqual(hex(s.push(Buffer.concat([Buffer.from('deadbeef', 'hex'), STATUS]))), [STATUS.toString('hex')]);
  t.is(s.buffered, 0);
});

test('gt06.frame: garbage alone is not kept', (t) => {
  const s = createGt06Splitter();
  t.deepEqual(s.push(Buffer.alloc(1000, 0x55)), []);
  t.is(s.buffered, 0);
  t.deepEqual(s.push(Buffer.from('0102037878', 'hex')), []);
  t.is(s.buffered, 2, 'a start marker at the end is kept');
});

test('gt06.frame: 0x7878 frames whose length byte is wrong end at their 0D 0A', (t) => {
  const shortLogin = Buffer.from('78780d0103563140414198583c0d0a', 'hex'); // says 18 bytes, has 15
  const wifi = Buffer.from('7878006919012105090303028f01007549e05a00bc9c5c5a007a8d1a5a0d0a', 'hex'); // length 0
  const longStatus = Buffer.from('787808134606020002044dc5050d0a', 'hex'); // stop bytes 2 past the length
  const s = createGt06Splitter();
  t.deepEqual(
    hex(s.push(Buffer.concat([shortLogin, wifi, longStatus]))),
    [shortLogin, wifi, longStatus].map((b) => b.toString('hex')),
  );
});

test('gt06.frame: oversized input stays bounded and the stream recovers', (t) => {
  const s = createGt06Splitter();
  // a 0x7979 head declaring 0xFFFF bytes, then endless data without stop bytes
  t.deepEqual(s.push(Buffer.from('7979ffff22', 'hex')), []);
  for (let i = 0; i < 50; i++) {
    s.push(Buffer.alloc(1000, 0x78));
    t.true(s.buffered <= GT06_MAX_FRAME_BYTES, `buffered ${s.buffered}`);
  }
  const out = s.push(Buffer.concat([Buffer.from('0000', 'hex'), LOGIN]));
  t.deepEqual(hex(out), [LOGIN.toString('hex')]);
  t.is(s.buffered, 0);
});

test('gt06.frame: a false start marker does not swallow the frame after it', (t) => {
  const s = createGt06Splitter();
  // '78 78 40' claims 69 bytes; the login that follows ends first
  t.deepEqual(hex(s.push(Buffer.concat([Buffer.from('787840aa', 'hex'), LOGIN]))), [LOGIN.toString('hex')]);
  t.deepEqual(hex(s.push(Buffer.concat([Buffer.from('787801', 'hex'), STATUS]))), [STATUS.toString('hex')]);
});

test('gt06.frame: an incomplete 0x7979 frame waits for the rest within the limit', (t) => {
  const s = createGt06Splitter(64);
  t.deepEqual(s.push(Buffer.from('7979003022', 'hex')), []);
  t.is(s.buffered, 5);
  s.push(Buffer.alloc(100, 0x11));
  t.true(s.buffered <= 64);
  t.deepEqual(hex(s.push(LOGIN)), [LOGIN.toString('hex')]);
});
