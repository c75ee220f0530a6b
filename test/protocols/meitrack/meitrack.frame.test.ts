import test from 'ava';
import { meitrackProtocol } from '../../../protocols/meitrack/meitrack.protocol.js';
import { meitrackAaa, meitrackCcc } from '../../helpers/meitrack-frames.js';

const IMEI = '356307042441013';
const fix = (i: number) => ({ time: new Date(Date.UTC(2026, 2, 1, 10, 0, i)), lat: 40.4168, lon: -3.7038 });
const aaa = meitrackAaa(IMEI, fix(0));
const ccc = meitrackCcc(IMEI, [fix(1), fix(2)]);
const split = () => meitrackProtocol.createSplitter!();
const hex = (frames: Buffer[]): string[] => frames.map((f) => f.toString('hex'));

test('meitrack.frame: two frames in one chunk yield two frames, cut by their decimal length', (t) => {
  t.deepEqual(hex(split().push(Buffer.concat([aaa, ccc]))), hex([aaa, ccc]));
});

test('meitrack.frame: a binary frame holding CR LF and `$$` inside is cut by its length, not its bytes', (t) => {
  const withMarkers = Buffer.from(ccc);
  withMarkers.write('$$\r\n', 40, 'latin1'); // inside the packets
  t.deepEqual(hex(split().push(Buffer.concat([withMarkers, aaa]))), hex([withMarkers, aaa]));
});

test('meitrack.frame: a frame split across chunks is held until complete', (t) => {
  const s = split();
  t.deepEqual(s.push(ccc.subarray(0, 4)), [], 'not even the length yet');
  t.deepEqual(s.push(ccc.subarray(4, 40)), []);
  t.is(s.buffered, 40);
  t.deepEqual(hex(s.push(ccc.subarray(40))), hex([ccc]));
  t.is(s.buffered, 0);
});

test('meitrack.frame: fed byte by byte, every frame comes out once', (t) => {
  const s = split();
  const out: Buffer[] = [];
  for (const b of Buffer.concat([aaa, ccc, aaa])) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(hex(out), hex([aaa, ccc, aaa]));
});

test('meitrack.frame: leading garbage, a stray `$`, and a header without a decimal length are skipped', (t) => {
  const garbage = Buffer.concat([Buffer.from('\x00\xffhello$x$$Ab,99$$'), aaa]);
  t.deepEqual(hex(split().push(garbage)), hex([aaa]));
});

test('meitrack.frame: a length past maxFrameBytes is skipped and the next frame found', (t) => {
  const s = meitrackProtocol.createSplitter!(256);
  t.deepEqual(hex(s.push(Buffer.concat([Buffer.from('$$A99999,123'), aaa]))), hex([aaa]));
  t.true(s.buffered <= 256);
});

test("meitrack.frame: the server's `@@` command frames are cut the same way", (t) => {
  const command = Buffer.from('@@A46,123456789012345,D03,1,camera_picture.jpg*1C\r\n', 'latin1');
  t.deepEqual(hex(split().push(command)), hex([command]));
});
