import test from 'ava';
import { wialonProtocol } from '../../../protocols/wialon/wialon.protocol.js';

const login = '#L#2.0;123456789012345;NA;15CD';
const data = '#SD#270413;205601;5544.6025;N;03739.6834;E;1;2;3;4';
const split = () => wialonProtocol.createSplitter!();
const text = (frames: Buffer[]): string[] => frames.map((f) => f.toString('latin1'));

test('wialon.frame: two packets in one chunk yield two frames, CR LF removed', (t) => {
  t.deepEqual(text(split().push(Buffer.from(`${login}\r\n${data}\r\n`))), [login, data]);
});

test('wialon.frame: a bare LF ends a packet too', (t) => {
  t.deepEqual(text(split().push(Buffer.from(`${login}\n${data}\n`))), [login, data]);
});

test('wialon.frame: a packet split across chunks is held until its line ends', (t) => {
  const s = split();
  t.deepEqual(s.push(Buffer.from(data.substring(0, 20))), []);
  t.is(s.buffered, 20);
  t.deepEqual(s.push(Buffer.from(`${data.substring(20)}\r`)), []);
  t.deepEqual(text(s.push(Buffer.from('\n'))), [data]);
  t.is(s.buffered, 0);
});

test('wialon.frame: fed byte by byte, every packet comes out once', (t) => {
  const s = split();
  const out: Buffer[] = [];
  for (const b of Buffer.from(`${login}\r\n${data}\r\n#P#\r\n`)) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(text(out), [login, data, '#P#']);
});

test('wialon.frame: binary garbage before a packet and blank lines are dropped', (t) => {
  const chunk = Buffer.concat([Buffer.from([0x00, 0xff, 0x13, 0x20]), Buffer.from(`${data}\r\n\r\n\n`)]);
  t.deepEqual(text(split().push(chunk)), [data]);
});

test('wialon.frame: an endless line is dropped at maxFrameBytes and the next packet is found', (t) => {
  const s = split();
  const max = wialonProtocol.maxFrameBytes;
  for (let i = 0; i < 6; i++) {
    t.deepEqual(s.push(Buffer.alloc(max / 2 + 1, 0x41)), []);
    t.true(s.buffered <= max + 1);
  }
  t.deepEqual(text(s.push(Buffer.from(`AAAA\r\n${data}\r\n`))), [data]);
});

test('wialon.frame: a line longer than maxFrameBytes in one chunk is dropped', (t) => {
  const s = wialonProtocol.createSplitter!(64);
  t.deepEqual(text(s.push(Buffer.from(`#D#${'x'.repeat(100)}\r\n${login}\r\n`))), [login]);
});
