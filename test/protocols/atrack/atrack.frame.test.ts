import test from 'ava';
import { atrackProtocol } from '../../../protocols/atrack/atrack.protocol.js';

const KEEPALIVE = Buffer.from('fe0200014104d8f196820001', 'hex');
const BINARY = Buffer.from(
  '40501e58003301e000014104d8f19682525ecd5d525ee344525ee35effc88815026ab4d70000020000104403de01000b0000000007d007d000',
  'hex',
);
const TEXT = Buffer.from(
  '@P,93D1,419,0,357766091026083,1557178589,1557178590,1557178590,-121899637,37406241,338,230,2809,8,0,0,0,0,,2000,2000,\r\n',
  'latin1',
);
// its length field counts from the comma after it: 143 bytes of record, the CR LF included
const SHORT_TEXT = Buffer.from(
  '@P,434E,124,104655,358901048091554,20180412143706,20180412143706,20180413060107,16423389,48178700,108,121,6.5,10,0,0,0,0,0,2000,2000,\r\n',
  'latin1',
);
const INFO = Buffer.from(
  '$INFO=358683066267395,AX7,Rev.0.61 Build.1624,358683066267395,466924131626767,89886920041316267670,144,0,9,1,12,1,0\r\n',
  'latin1',
);
const hexes = (frames: Buffer[]): string[] => frames.map((f) => f.toString('hex'));
const split = () => atrackProtocol.createSplitter!();

test('atrack.frame: each kind of frame fed byte by byte comes out whole, once', (t) => {
  for (const frame of [KEEPALIVE, BINARY, SHORT_TEXT, INFO, Buffer.from('$OK\r\n')]) {
    const s = split();
    const out: Buffer[] = [];
    for (const b of frame) out.push(...s.push(Buffer.from([b])));
    t.deepEqual(hexes(out), [frame.toString('hex')], frame.subarray(0, 8).toString('latin1'));
    t.is(s.buffered, 0);
  }
});

test('atrack.frame: a text report is as long as its length field says, its CR LF included', (t) => {
  t.deepEqual(hexes(split().push(SHORT_TEXT)), [SHORT_TEXT.toString('hex')]);
  // the length field rules, not the CR LF: a report claiming 419 bytes (11 + 419) waits for them all
  const s = split();
  t.deepEqual(s.push(Buffer.concat([TEXT, KEEPALIVE])), []);
  const rest = Buffer.alloc(11 + 419 - TEXT.length - KEEPALIVE.length, 0x30);
  const frames = s.push(rest);
  t.is(frames.length, 1);
  t.is(frames[0].length, 430);
});

test('atrack.frame: a keep-alive, a binary report, a text report and an answer in one chunk are four frames', (t) => {
  const s = split();
  const chunk = Buffer.concat([KEEPALIVE, BINARY, SHORT_TEXT, INFO]);
  t.deepEqual(
    hexes(s.push(chunk)),
    [KEEPALIVE, BINARY, SHORT_TEXT, INFO].map((b) => b.toString('hex')),
  );
  t.is(s.buffered, 0);
});

test('atrack.frame: a $INFO answer, commas and all, ends at its CR LF', (t) => {
  t.deepEqual(
    hexes(split().push(Buffer.concat([INFO, KEEPALIVE]))),
    [INFO, KEEPALIVE].map((b) => b.toString('hex')),
  );
});

test('atrack.frame: garbage before a frame is skipped', (t) => {
  const s = split();
  t.deepEqual(hexes(s.push(Buffer.concat([Buffer.from('\r\n\x00xyz', 'latin1'), BINARY]))), [BINARY.toString('hex')]);
  t.deepEqual(hexes(s.push(Buffer.concat([Buffer.from('zz\xff', 'latin1'), KEEPALIVE]))), [KEEPALIVE.toString('hex')]);
  // a comma third but no number for a length: not a text report
  t.deepEqual(hexes(s.push(Buffer.concat([Buffer.from('@P,12,ab,', 'latin1'), SHORT_TEXT]))), [
    SHORT_TEXT.toString('hex'),
  ]);
});

test('atrack.frame: a binary report split across writes waits for its length', (t) => {
  const s = split();
  t.deepEqual(s.push(BINARY.subarray(0, 5)), []);
  t.deepEqual(s.push(BINARY.subarray(5, 30)), []);
  t.deepEqual(hexes(s.push(Buffer.concat([BINARY.subarray(30), KEEPALIVE.subarray(0, 4)]))), [BINARY.toString('hex')]);
  t.deepEqual(hexes(s.push(KEEPALIVE.subarray(4))), [KEEPALIVE.toString('hex')]);
});

test('atrack.frame: a frame longer than the limit is skipped and the next one found; the buffer stays bounded', (t) => {
  const s = atrackProtocol.createSplitter!(100);
  const long = Buffer.from(BINARY);
  long.writeUInt16BE(200, 4); // claims 206 bytes
  t.deepEqual(hexes(s.push(Buffer.concat([long, KEEPALIVE]))), [KEEPALIVE.toString('hex')]);
  t.deepEqual(s.push(Buffer.from(`$${'x'.repeat(150)}`)), []);
  t.true(s.buffered <= 100);
  t.deepEqual(hexes(s.push(Buffer.concat([Buffer.from('x\r\n'), KEEPALIVE]))), [KEEPALIVE.toString('hex')]);
});
