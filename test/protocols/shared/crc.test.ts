import test from 'ava';
import { crc16Arc, crc16Kermit, crc16X25 } from '../../../protocols/shared/crc.js';

/** The CRC bit by bit, as the catalogue defines it (reflected poly, init, xorout). */
function bitwise(poly: number, init: number, xorout: number, buf: Buffer, start: number, end: number): number {
  let crc = init;
  for (let i = start; i < end; i++) {
    crc ^= buf[i];
    for (let b = 0; b < 8; b++) crc = crc & 1 ? (crc >>> 1) ^ poly : crc >>> 1;
  }
  return (crc ^ xorout) & 0xffff;
}

test('crc: the catalogue check values of "123456789"', (t) => {
  const check = Buffer.from('123456789', 'ascii');
  t.is(crc16Arc(check), 0xbb3d);
  t.is(crc16X25(check), 0x906e);
  t.is(crc16Kermit(check), 0x2189);
});

test('crc: the same as bit by bit on random data, whole buffers and ranges', (t) => {
  for (let n = 0; n < 300; n++) {
    const buf = Buffer.alloc(n);
    for (let i = 0; i < n; i++) buf[i] = Math.floor(Math.random() * 256);
    const start = n > 4 ? Math.floor(Math.random() * (n / 2)) : 0;
    const end = n > 4 ? start + Math.floor(Math.random() * (n - start)) : n;
    t.is(crc16Arc(buf), bitwise(0xa001, 0, 0, buf, 0, n));
    t.is(crc16Arc(buf, start, end), bitwise(0xa001, 0, 0, buf, start, end));
    t.is(crc16X25(buf, start, end), bitwise(0x8408, 0xffff, 0xffff, buf, start, end));
    t.is(crc16Kermit(buf, start, end), bitwise(0x8408, 0, 0, buf, start, end));
  }
});
