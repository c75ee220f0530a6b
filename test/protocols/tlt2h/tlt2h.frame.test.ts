import test from 'ava';
import { tlt2hProtocol } from '../../../protocols/tlt2h/tlt2h.protocol.js';

const one =
  '#357671030946351#V500#0000#AUTO#1\r\n#$GPRMC,223835.000,A,0615.3545,S,10708.5779,E,14.62,97.41,070313,,,D*70\r\n';
const two =
  '#353686009063310#353686009063310#0000#AUTO#2\r\n#239757a9$GPRMC,150252.001,A,2326.6856,S,4631.8154,W,,,260513,,,A*52\r\n#239757a9$GPRMC,150322.001,A,2326.6854,S,4631.8157,W,,,260513,,,A*55\r\n';
const END = '##\r\n';
const split = () => tlt2hProtocol.createSplitter!();
const text = (frames: Buffer[]): string[] => frames.map((f) => f.toString('latin1'));

test('tlt2h.frame: two messages in one chunk yield two frames, ##\\r\\n dropped and inner lines kept', (t) => {
  t.deepEqual(text(split().push(Buffer.from(one + END + two + END))), [one, two]);
});

test('tlt2h.frame: the end marker split across chunks is still found', (t) => {
  const s = split();
  t.deepEqual(s.push(Buffer.from(`${one}##`)), []);
  t.deepEqual(s.push(Buffer.from('\r')), []);
  t.deepEqual(text(s.push(Buffer.from('\n'))), [one]);
  t.is(s.buffered, 0);
});

test('tlt2h.frame: fed byte by byte, every message comes out once', (t) => {
  const s = split();
  const out: Buffer[] = [];
  for (const b of Buffer.from(one + END + two + END)) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(text(out), [one, two]);
});

test('tlt2h.frame: garbage and line ends in front of a message are dropped', (t) => {
  const chunk = Buffer.concat([Buffer.from([0x00, 0xfe, 0x0d, 0x0a]), Buffer.from(`\r\n${one}${END}`)]);
  t.deepEqual(text(split().push(chunk)), [one]);
});

test('tlt2h.frame: an endless message is dropped at maxFrameBytes and the next one is found', (t) => {
  const s = split();
  const max = tlt2hProtocol.maxFrameBytes;
  for (let i = 0; i < 6; i++) {
    t.deepEqual(s.push(Buffer.alloc(max / 2 + 1, 0x41)), []);
    t.true(s.buffered <= max);
  }
  t.deepEqual(text(s.push(Buffer.from(`AAAA${END}${one}${END}`))), [one]);
});

test('tlt2h.frame: an end marker arriving in pieces while an overlong message is discarded still ends it', (t) => {
  const s = tlt2hProtocol.createSplitter!(64);
  t.deepEqual(s.push(Buffer.from(`${'x'.repeat(100)}#`)), []);
  t.deepEqual(s.push(Buffer.from('#\r')), []);
  t.deepEqual(text(s.push(Buffer.from(`\n${one.substring(0, 40)}${END}`))), [one.substring(0, 40)]);
});
