import test from 'ava';
import { trvProtocol } from '../../../protocols/trv/trv.protocol.js';

const login = 'IWAP00353456789012345';
const position =
  'IWAP01080524A2232.9806N11404.9355E000.1061830323.8706000908000102,460,0,9520,3671,Home|74-DE-2B-44-88-8C|97';
const split = () => trvProtocol.createSplitter!();
const text = (frames: Buffer[]): string[] => frames.map((f) => f.toString('latin1'));

test('trv.frame: two messages in one chunk yield two frames, the # dropped', (t) => {
  t.deepEqual(text(split().push(Buffer.from(`${login}#${position}#`))), [login, position]);
});

test('trv.frame: a message split across chunks is held until its #', (t) => {
  const s = split();
  t.deepEqual(s.push(Buffer.from(position.substring(0, 40))), []);
  t.is(s.buffered, 40);
  t.deepEqual(text(s.push(Buffer.from(`${position.substring(40)}#`))), [position]);
  t.is(s.buffered, 0);
});

test('trv.frame: fed byte by byte, every message comes out once', (t) => {
  const s = split();
  const out: Buffer[] = [];
  for (const b of Buffer.from(`${login}#${position}#IWAP49,68#`)) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(text(out), [login, position, 'IWAP49,68']);
});

test('trv.frame: binary garbage, line ends and empty frames before a message are dropped', (t) => {
  const chunk = Buffer.concat([Buffer.from([0x00, 0xff, 0x0d, 0x0a]), Buffer.from(`##\r\n${login}#`)]);
  t.deepEqual(text(split().push(chunk)), [login]);
});

test('trv.frame: an endless message is dropped at maxFrameBytes and the next one is found', (t) => {
  const s = split();
  const max = trvProtocol.maxFrameBytes;
  for (let i = 0; i < 10; i++) {
    t.deepEqual(s.push(Buffer.alloc(max / 2 + 1, 0x41)), []);
    t.true(s.buffered <= max);
  }
  // the tail of the overlong message is discarded up to its #
  t.deepEqual(text(s.push(Buffer.from(`AAAA#${login}#`))), [login]);
});

test('trv.frame: a message longer than maxFrameBytes in one chunk is dropped', (t) => {
  const s = trvProtocol.createSplitter!(64);
  t.deepEqual(text(s.push(Buffer.from(`${'x'.repeat(100)}#${login}#`))), [login]);
});
