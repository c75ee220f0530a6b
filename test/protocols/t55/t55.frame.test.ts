import test from 'ava';
import { t55Protocol } from '../../../protocols/t55/t55.protocol.js';

const RMC = '$GPRMC,094907.000,A,6000.5332,N,03020.5192,E,1.17,60.26,091111,,*33';
const PGID = '$PGID,359853000144328*0F';
const strings = (frames: Buffer[]): string[] => frames.map((f) => f.toString('latin1'));

test('t55.frame: a line split across chunks, byte by byte, is one frame without its CR LF', (t) => {
  const s = t55Protocol.createSplitter!();
  const out: Buffer[] = [];
  for (const b of Buffer.from(`${RMC}\r\n`)) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(strings(out), [RMC]);
  t.is(s.buffered, 0);
});

test('t55.frame: two lines in one chunk, LF or CR LF, are two frames; blank lines are dropped', (t) => {
  const s = t55Protocol.createSplitter!();
  t.deepEqual(strings(s.push(Buffer.from(`${PGID}\r\n\r\n\n${RMC}\n`))), [PGID, RMC]);
  t.is(s.buffered, 0);
});

test('t55.frame: garbage before a line stays in that line (the decoder reads past it or refuses it)', (t) => {
  const s = t55Protocol.createSplitter!();
  t.deepEqual(strings(s.push(Buffer.from(`\x00\x01junk\n${RMC}\n`))), ['\x00\x01junk', RMC]);
  t.deepEqual(
    t55Protocol.decode!(Buffer.from('\x00\x01junk'), {
      now: new Date(),
      transport: 'tcp',
      checksum: 'accept',
      session: {},
    }).messages,
    [],
  );
});

test('t55.frame: a line longer than the limit is dropped up to its LF, and the next is found', (t) => {
  const s = t55Protocol.createSplitter!(100);
  t.deepEqual(s.push(Buffer.from(`$GPRMC,${'9'.repeat(150)}`)), []);
  t.true(s.buffered <= 100);
  t.deepEqual(strings(s.push(Buffer.from(`${'9'.repeat(50)}\n${PGID}\n`))), [PGID]);
});
