import test from 'ava';
import { h02Protocol } from '../../../protocols/h02/h02.protocol.js';
import { createH02Splitter } from '../../../protocols/h02/h02.frame.js';

const TEXT = Buffer.from(
  '*HQ,4210051415,V1,164549,A,0956.3869,N,08406.7068,W,000.00,000,221215,FFFFFBFF,712,01,0,0,6#',
  'latin1',
);
const SHORT = Buffer.from('2441060116601245431311165035313006004318210e000000fffffbffff0024', 'hex');
const LONG = Buffer.from(
  '24410600082621532131081504419390060740418306000000fffffbfdff0015060000002c02dc0c000000001f',
  'hex',
);
const ALT = Buffer.from('5800009814991024031101175540227006012321670c000095fffffbffff0033', 'hex');

const hex = (frames: Buffer[]): string[] => frames.map((f) => f.toString('hex'));

test('h02.frame: a text frame split across chunks, byte by byte, yields one frame', (t) => {
  const s = h02Protocol.createSplitter!();
  const out: Buffer[] = [];
  for (const b of TEXT) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(hex(out), hex([TEXT]));
  t.is(s.buffered, 0);
});

test('h02.frame: a 32-byte binary frame fed byte by byte yields one frame', (t) => {
  const s = h02Protocol.createSplitter!();
  const out: Buffer[] = [];
  for (const b of Buffer.concat([SHORT, SHORT])) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(hex(out), hex([SHORT, SHORT]));
});

test('h02.frame: 45-byte binary frames split across chunks are cut at 45 once the next frame shows', (t) => {
  const s = h02Protocol.createSplitter!();
  const out: Buffer[] = [];
  const stream = Buffer.concat([LONG, LONG, TEXT]);
  for (let i = 0; i < stream.length; i += 40) out.push(...s.push(stream.subarray(i, i + 40)));
  t.deepEqual(hex(out), hex([LONG, LONG, TEXT]));
});

test('h02.frame: once 45 bytes are known, binary frames fed byte by byte stay whole', (t) => {
  const s = h02Protocol.createSplitter!();
  const out = s.push(LONG);
  for (const b of Buffer.concat([LONG, LONG])) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(hex(out), hex([LONG, LONG, LONG]));
});

test('h02.frame: a lone 45-byte frame in one chunk is long; a lone 32-byte frame is short', (t) => {
  t.deepEqual(hex(h02Protocol.createSplitter!().push(LONG)), hex([LONG]));
  t.deepEqual(hex(h02Protocol.createSplitter!().push(SHORT)), hex([SHORT]));
});

test('h02.frame: a short binary frame followed by a text frame in one chunk yields both', (t) => {
  const s = h02Protocol.createSplitter!();
  t.deepEqual(hex(s.push(Buffer.concat([SHORT, TEXT]))), hex([SHORT, TEXT]));
});

test('h02.frame: two frames in one chunk yield two frames, CR/LF after text skipped', (t) => {
  const s = h02Protocol.createSplitter!();
  const crlf = Buffer.from('\r\n');
  t.deepEqual(hex(s.push(Buffer.concat([TEXT, crlf, TEXT, crlf]))), hex([TEXT, TEXT]));
  t.is(s.buffered, 0);
});

test('h02.frame: short frames back to back are detected as 32 bytes and stay so', (t) => {
  const s = h02Protocol.createSplitter!();
  t.deepEqual(hex(s.push(Buffer.concat([SHORT, SHORT, ALT]))), hex([SHORT, SHORT, ALT]));
  const part = s.push(SHORT.subarray(0, 20));
  t.deepEqual(part, []);
  t.deepEqual(hex(s.push(Buffer.concat([SHORT.subarray(20), TEXT.subarray(0, 15)]))), hex([SHORT]));
});

test('h02.frame: leading garbage is skipped', (t) => {
  const s = h02Protocol.createSplitter!();
  const garbage = Buffer.from('\x00\x01hello\r\n#', 'latin1');
  t.deepEqual(hex(s.push(Buffer.concat([garbage, TEXT, garbage, SHORT]))), hex([TEXT, SHORT]));
});

test('h02.frame: an X frame is 32 bytes', (t) => {
  const s = h02Protocol.createSplitter!();
  t.deepEqual(hex(s.push(Buffer.concat([ALT, TEXT]))), hex([ALT, TEXT]));
});

test('h02.frame: a configured message length (h02.messageLength) is used as is', (t) => {
  const frame42 = Buffer.from(
    '2435248308419329301047591808172627335900074412294E024138FEFFFFFFFF01120064BA73005ECC',
    'hex',
  );
  const s = createH02Splitter({ messageLength: 42 });
  t.deepEqual(hex(s.push(Buffer.concat([frame42, frame42.subarray(0, 41)]))), hex([frame42]));
  t.deepEqual(hex(s.push(frame42.subarray(41))), hex([frame42]));
});

test('h02.frame: a text frame with no end stays bounded and the stream resynchronises', (t) => {
  const s = h02Protocol.createSplitter!(200);
  const endless = Buffer.alloc(1000, 'A');
  endless[0] = 0x2a;
  let out: Buffer[] = [];
  for (let i = 0; i < endless.length; i += 37) {
    out.push(...s.push(endless.subarray(i, i + 37)));
    t.true(s.buffered <= 200);
  }
  t.deepEqual(out, []);
  out = s.push(TEXT);
  t.deepEqual(hex(out), hex([TEXT]));
});

test('h02.frame: a text frame longer than maxFrameBytes is dropped', (t) => {
  const s = h02Protocol.createSplitter!(100);
  const long = Buffer.concat([Buffer.from('*HQ,1,SMS,'), Buffer.alloc(200, 'a'), Buffer.from('#')]);
  t.deepEqual(hex(s.push(Buffer.concat([long, TEXT.subarray(0, 90)]))), []);
  t.true(s.buffered <= 100);
  t.deepEqual(hex(s.push(TEXT.subarray(90))), hex([TEXT]));
});
