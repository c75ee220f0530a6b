import test from 'ava';
import { laipacProtocol } from '../../../protocols/laipac/laipac.protocol.js';

const login = '$ECHK,99999999,0*35';
const data = '$AVRMC,99999999,164339,A,4351.0542,N,07923.5445,W,0.29,78.66,180703,0,3.727,17,1,0,0*37';
const split = () => laipacProtocol.createSplitter!();
const text = (frames: Buffer[]): string[] => frames.map((f) => f.toString('latin1'));

test('laipac.frame: two sentences in one chunk yield two frames, CR LF removed', (t) => {
  t.deepEqual(text(split().push(Buffer.from(`${login}\r\n${data}\r\n`))), [login, data]);
});

test('laipac.frame: a bare LF ends a sentence too', (t) => {
  t.deepEqual(text(split().push(Buffer.from(`${login}\n${data}\n`))), [login, data]);
});

test('laipac.frame: a sentence split across chunks is held until its line ends', (t) => {
  const s = split();
  t.deepEqual(s.push(Buffer.from(data.substring(0, 20))), []);
  t.is(s.buffered, 20);
  t.deepEqual(s.push(Buffer.from(`${data.substring(20)}\r`)), []);
  t.deepEqual(text(s.push(Buffer.from('\n'))), [data]);
  t.is(s.buffered, 0);
});

test('laipac.frame: fed byte by byte, every sentence comes out once', (t) => {
  const s = split();
  const out: Buffer[] = [];
  for (const b of Buffer.from(`${login}\r\n${data}\r\n$ECHK,1,0*1D\r\n`)) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(text(out), [login, data, '$ECHK,1,0*1D']);
});

test('laipac.frame: binary garbage before a sentence and blank lines are dropped', (t) => {
  const chunk = Buffer.concat([Buffer.from([0x00, 0xff, 0x13, 0x20]), Buffer.from(`${data}\r\n\r\n\n`)]);
  t.deepEqual(text(split().push(chunk)), [data]);
});

test('laipac.frame: an endless line is dropped at maxFrameBytes and the next sentence is found', (t) => {
  const s = split();
  const max = laipacProtocol.maxFrameBytes;
  for (let i = 0; i < 6; i++) {
    t.deepEqual(s.push(Buffer.alloc(max / 2 + 1, 0x41)), []);
    t.true(s.buffered <= max + 1);
  }
  t.deepEqual(text(s.push(Buffer.from(`AAAA\r\n${data}\r\n`))), [data]);
});

test('laipac.frame: a line longer than maxFrameBytes in one chunk is dropped', (t) => {
  const s = laipacProtocol.createSplitter!(64);
  t.deepEqual(text(s.push(Buffer.from(`$AVRMC,${'x'.repeat(100)}\r\n${login}\r\n`))), [login]);
});
