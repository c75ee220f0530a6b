import test from 'ava';
import { gps103Protocol } from '../../../protocols/gps103/gps103.protocol.js';

const login = '##,imei:359586015829802,A;';
const report = 'imei:359710049092324,tracker,151027025958,,F,235957.000,A,2429.5156,N,04424.5828,E,0.01,27.91,,0,0,,,;';
const alt =
  'imei:861359038609986,Equipo 1,---,------,----,214812,241018,14,0,-33.42317,-70.61930,000,000,0000,99.9,00,0,1,---,*';
const split = () => gps103Protocol.createSplitter!();
const text = (frames: Buffer[]): string[] => frames.map((f) => f.toString('latin1'));

test('gps103.frame: two sentences in one chunk yield two frames, delimiters kept', (t) => {
  t.deepEqual(text(split().push(Buffer.from(login + report))), [login, report]);
});

test('gps103.frame: \\r\\n, \\n, ; and * all end a sentence', (t) => {
  const out = text(split().push(Buffer.from('359586015829802\r\n359586015829803\n' + report + alt)));
  t.deepEqual(out, ['359586015829802\r\n', '359586015829803\n', report, alt]);
});

test('gps103.frame: a sentence split across chunks is held until its delimiter', (t) => {
  const s = split();
  t.deepEqual(s.push(Buffer.from(report.substring(0, 30))), []);
  t.is(s.buffered, 30);
  t.deepEqual(text(s.push(Buffer.from(report.substring(30)))), [report]);
  t.is(s.buffered, 0);
});

test('gps103.frame: fed byte by byte, every sentence comes out once', (t) => {
  const s = split();
  const out: Buffer[] = [];
  for (const b of Buffer.from(login + report + alt)) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(text(out), [login, report, alt]);
});

test('gps103.frame: leading binary garbage and empty sentences are dropped', (t) => {
  const chunk = Buffer.concat([Buffer.from([0x00, 0xff, 0x13, 0x0d, 0x0a]), Buffer.from(';\r\n' + report + '\r\n')]);
  t.deepEqual(text(split().push(chunk)), [report]);
});

test('gps103.frame: an endless sentence is dropped at maxFrameBytes and the next one is found', (t) => {
  const s = split();
  const max = gps103Protocol.maxFrameBytes;
  for (let i = 0; i < 10; i++) {
    t.deepEqual(s.push(Buffer.alloc(max / 2 + 1, 0x41)), []);
    t.true(s.buffered <= max);
  }
  // the tail of the overlong sentence is discarded up to its delimiter
  t.deepEqual(text(s.push(Buffer.from('AAAA;' + report))), [report]);
});

test('gps103.frame: a sentence longer than maxFrameBytes in one chunk is dropped', (t) => {
  const s = gps103Protocol.createSplitter!(64);
  t.deepEqual(text(s.push(Buffer.from('x'.repeat(100) + ';' + login))), [login]);
});
