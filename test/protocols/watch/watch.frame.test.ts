import test from 'ava';
import { watchProtocol } from '../../../protocols/watch/watch.protocol.js';

const LK = Buffer.from('[3G*9705141740*0009*LK,0,0,53]', 'latin1');
const UD = Buffer.from(
  '[SG*9051000884*0053*UD,251021,223408,A,41.46500,N,081.53128,W,0.926,000,0,00,70,70,0,50,00000000,0,1,,,,00]',
  'latin1',
);
const text = (frames: Buffer[]): string[] => frames.map((f) => f.toString('latin1'));

test('watch.frame: a frame split across chunks, byte by byte, yields one frame and nothing is held', (t) => {
  const s = watchProtocol.createSplitter!();
  const out: Buffer[] = [];
  for (const b of UD) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(text(out), text([UD]));
  t.is(s.buffered, 0);
});

test('watch.frame: two frames in one chunk yield two frames', (t) => {
  t.deepEqual(text(watchProtocol.createSplitter!().push(Buffer.concat([LK, UD]))), text([LK, UD]));
});

test('watch.frame: garbage before, between and after frames is skipped', (t) => {
  const s = watchProtocol.createSplitter!();
  const out = s.push(
    Buffer.concat([Buffer.from('\r\nnoise]]'), LK, Buffer.from('\x00\xff junk'), UD, Buffer.from('tail')]),
  );
  t.deepEqual(text(out), text([LK, UD]));
  t.is(s.buffered, 0, 'trailing garbage without [ is not kept');
});

test('watch.frame: escapes are resolved and brackets inside a Wi-Fi name do not end the frame', (t) => {
  const s = watchProtocol.createSplitter!();
  t.deepEqual(
    s.push(Buffer.from('[CS*1*0007*TK,}\x01}\x02}\x03}\x04}\x05]', 'latin1')).map((f) => f.toString('latin1')),
    ['[CS*1*0007*TK,}[],*]'],
  );
  const wifi = Buffer.from('[3G*1*0030*UD,1,[LG A/C]e725,2]', 'latin1');
  t.deepEqual(text(s.push(wifi)), text([wifi]));
});

test('watch.frame: an unclosed frame longer than the limit is dropped and the next frame is found', (t) => {
  const s = watchProtocol.createSplitter!(64);
  t.deepEqual(s.push(Buffer.from('[SG*1*0100*UD,' + 'x'.repeat(80))), []);
  t.true(s.buffered <= 64);
  t.deepEqual(text(s.push(LK)), text([LK]));
});
