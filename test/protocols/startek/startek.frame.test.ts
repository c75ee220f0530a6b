import test from 'ava';
import { startekProtocol } from '../../../protocols/startek/startek.protocol.js';

const A =
  '&&o125,861157040554384,000,0,,210702235150,A,27.263505,153.037061,11,1.2,0,0,31,5125,505|1|7032|8C89802,20,0000002D,00,00,01E2|019DF0\r\n';
const B = '&&:23,860262050015424,129,OKA2\r\n';
const strings = (frames: Buffer[]): string[] => frames.map((f) => f.toString('latin1'));

test('startek.frame: the length field gives the frame size, CR LF included', (t) => {
  t.deepEqual(strings(startekProtocol.createSplitter!().push(Buffer.from(A))), [A]);
});

test('startek.frame: a frame split across chunks, byte by byte, is one frame', (t) => {
  const s = startekProtocol.createSplitter!();
  const out: Buffer[] = [];
  for (const b of Buffer.from(A)) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(strings(out), [A]);
  t.is(s.buffered, 0);
});

test('startek.frame: two frames in one chunk are two frames; CR LF inside a 710 block does not end it', (t) => {
  const block = '&&\\47,865491061145970,710,T1,0.0,0.0\r\nT2,0.000,0.0\r\nF3\r\n';
  const s = startekProtocol.createSplitter!();
  t.deepEqual(strings(s.push(Buffer.from(A + block + B))), [A, block, B]);
  t.is(s.buffered, 0);
});

test('startek.frame: garbage before a frame, and a && whose length cannot be read, are skipped', (t) => {
  const s = startekProtocol.createSplitter!();
  t.deepEqual(strings(s.push(Buffer.from(`\r\nxx&&&&zz,12,&&a1x,1,2${B}junk&`))), [B]);
  t.is(s.buffered, 1, 'a trailing & may begin the next frame');
  t.deepEqual(strings(s.push(Buffer.from(B))), [B]);
});

test('startek.frame: a frame longer than the limit is skipped and the next is found', (t) => {
  const s = startekProtocol.createSplitter!(100);
  t.deepEqual(strings(s.push(Buffer.from(`&&a999,1,000,${'9'.repeat(50)}`))), []);
  t.true(s.buffered <= 100);
  t.deepEqual(strings(s.push(Buffer.from(B))), [B]);
  t.deepEqual(
    strings(startekProtocol.createSplitter!().push(Buffer.from('&&a9999999,1,000,x\r\n'))),
    [],
    'six length digits are no header',
  );
});

test('startek.frame: a server command ($$:<length>,...) is cut by the same length rule', (t) => {
  const command = '$$:24,123456789012345,900,1,19F\r\n';
  t.deepEqual(strings(startekProtocol.createSplitter!().push(Buffer.from(`x${command}${B}`))), [command, B]);
});
