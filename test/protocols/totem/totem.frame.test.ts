import test from 'ava';
import { totemProtocol } from '../../../protocols/totem/totem.protocol.js';

const NEW =
  '$$0108AA863835028447675|5004C0001710250234134114057728A058AE112108305100.600000660304.7787N10134.8719E116458';
const OLD =
  '$$B2359772032984289|AA$GPRMC,104446.000,A,5011.3944,N,01439.6637,E,0.00,,290212,,,A*7D|01.8|00.9|01.5|000000100000|20120229104446|14151221|00050000|046D085E|0000|0.0000|1170|29A7';
const strings = (frames: Buffer[]): string[] => frames.map((f) => f.toString('latin1'));

test('totem.frame: the lengths of both formats count the whole frame, not the CR LF after it', (t) => {
  t.is(NEW.length, 108);
  t.is(OLD.length, 0xb2);
  const s = totemProtocol.createSplitter!();
  t.deepEqual(strings(s.push(Buffer.from(`${NEW}\r\n`))), [NEW]);
  t.deepEqual(strings(s.push(Buffer.from(`${OLD}\r\n`))), [OLD]);
});

test('totem.frame: a frame split across chunks, byte by byte, is one frame', (t) => {
  const s = totemProtocol.createSplitter!();
  const out: Buffer[] = [];
  for (const b of Buffer.from(`${OLD}\r\n`)) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(strings(out), [OLD]);
  t.is(s.buffered, 0, 'the CR LF after it is dropped as bytes before no $$');
});

test('totem.frame: two frames in one chunk, with garbage before and between them', (t) => {
  const s = totemProtocol.createSplitter!();
  t.deepEqual(strings(s.push(Buffer.from(`\r\nxx$${NEW}\r\n\x00${OLD}`))), [NEW, OLD]);
  t.is(s.buffered, 0);
});

test('totem.frame: a $$ without a length is passed over; a frame longer than the limit is given up', (t) => {
  const s = totemProtocol.createSplitter!(150);
  t.deepEqual(strings(s.push(Buffer.from(`$$zz${NEW}`))), [NEW]);
  t.deepEqual(strings(s.push(Buffer.from(`${OLD}${NEW}`))), [NEW], 'the 178-byte frame is over the limit');
});
