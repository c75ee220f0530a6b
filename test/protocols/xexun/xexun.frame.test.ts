import test from 'ava';
import { xexunProtocol } from '../../../protocols/xexun/xexun.protocol.js';
import { createXexunSplitter } from '../../../protocols/xexun/xexun.frame.js';

const FULL =
  '150615123731,+33647384611,GPRMC,103731.636,A,4545.5266,N,00448.8259,E,21.12,276.01,150615,,,A*57,L,, imei:013949002026675,04,3522.9,F:3.72V,0,142,21744,208,01,0702,9C8C';
const BASIC = 'GPRMC,150120.000,A,3346.4463,S,15057.3083,E,0.0,117.4,010911,,,A*76,F,imei:351525010943661,';
const strings = (frames: Buffer[]): string[] => frames.map((f) => f.toString('latin1'));
const bytewise = (s: ReturnType<typeof createXexunSplitter>, input: string): string[] => {
  const out: Buffer[] = [];
  for (const b of Buffer.from(input, 'latin1')) out.push(...s.push(Buffer.from([b])));
  return strings(out);
};

test('xexun.frame: a full line (the tracker ends it LF CR) fed byte by byte is one frame, whole', (t) => {
  const s = xexunProtocol.createSplitter!();
  t.deepEqual(bytewise(s, `${FULL}\n\r`), [FULL]);
  t.is(s.buffered, 0);
});

test('xexun.frame: a basic record ends at the comma after imei:<digits>, even without a line end', (t) => {
  const s = xexunProtocol.createSplitter!();
  t.deepEqual(bytewise(s, BASIC), [BASIC]);
  const crlf = 'GPRMC,121535.000,A,5417.2666,N,04822.1264,E,1.452,30.42,031014,0.0,A*4D\r\n,L,imei:355227042011730,';
  t.deepEqual(strings(s.push(Buffer.from(crlf, 'latin1'))), [crlf], 'a CR LF inside the record does not end it');
});

test('xexun.frame: two full lines and two basic records in one chunk are four frames', (t) => {
  const s = xexunProtocol.createSplitter!();
  t.deepEqual(strings(s.push(Buffer.from(`${FULL}\n\r${FULL}\n\r${BASIC}${BASIC}`, 'latin1'))), [
    FULL,
    FULL,
    BASIC,
    BASIC,
  ]);
  t.is(s.buffered, 0);
});

test('xexun.frame: garbage before a record is dropped; a line without RMC is kept only when it names a device', (t) => {
  const s = xexunProtocol.createSplitter!();
  const status = ',+48606717068,,L,, imei:012207005047292,,,F:4.28V,1,52,11565,247,01,000E,1FC5';
  t.deepEqual(strings(s.push(Buffer.from(`junk\r\n\x00\x01xx${BASIC}noise\n${status}\n\r${FULL}\n`, 'latin1'))), [
    BASIC,
    status,
    FULL,
  ]);
});

test('xexun.frame: the basic mode cuts every record as the reference frame decoder does', (t) => {
  const s = createXexunSplitter(undefined, 'basic');
  const basicOfFull = FULL.slice(FULL.indexOf('GPRMC'), FULL.indexOf('imei:') + 'imei:013949002026675,'.length);
  t.deepEqual(strings(s.push(Buffer.from(`${FULL}\n\r${BASIC}`, 'latin1'))), [basicOfFull, BASIC]);
});

test('xexun.frame: more than the limit without a record is dropped, and the next record is found', (t) => {
  const s = xexunProtocol.createSplitter!(300);
  t.deepEqual(s.push(Buffer.from('9'.repeat(400))), []);
  t.is(s.buffered, 0);
  t.deepEqual(s.push(Buffer.from(`150615123731,+3364,GPRMC,${'1'.repeat(350)}`)), []);
  t.is(s.buffered, 0, 'a line too long is given up');
  t.deepEqual(strings(s.push(Buffer.from(`\n${BASIC}`))), [BASIC]);
});
