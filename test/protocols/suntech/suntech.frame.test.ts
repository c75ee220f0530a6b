import test from 'ava';
import { suntechProtocol } from '../../../protocols/suntech/suntech.protocol.js';

const STT =
  'SA200STT;317652;042;20120718;15:37:12;16d41;-15.618755;-056.083241;000.024;000.00;8;1;41548;12.17;100000;2;1979';
const UEX =
  'ST300UEX;511248287;45;311;20220701;18:42:08;14c943;-22.975257;-043.373065;000.000;000.00;0;0;0;12.14;100010;19;RFID:008FB2BEBA39\r\n;3E;000135;4.1;1';
const BINARY = Buffer.from(
  '81004e05200013383fffff3401000301130a0512080400000000000000000000000047f9d5846a06810072225214010100020300a8002604c1000004b000000470000025a100000000000025c4000000a6',
  'hex',
);
const strings = (frames: Buffer[]): string[] => frames.map((f) => f.toString('latin1'));

test('suntech.frame: a report split across chunks, byte by byte, is one frame without its CR', (t) => {
  const s = suntechProtocol.createSplitter!();
  const out: Buffer[] = [];
  for (const b of Buffer.from(`${STT}\r`)) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(strings(out), [STT]);
  t.is(s.buffered, 0);
});

test('suntech.frame: CR LF inside UEX serial data does not end the report', (t) => {
  t.deepEqual(strings(suntechProtocol.createSplitter!().push(Buffer.from(`${UEX}\r`, 'latin1'))), [UEX]);
});

test('suntech.frame: two reports and a binary report in one chunk are three frames', (t) => {
  const s = suntechProtocol.createSplitter!();
  const out = s.push(Buffer.concat([Buffer.from(`${STT}\r${STT}\r`), BINARY]));
  t.deepEqual(
    out.map((f) => f.toString('hex')),
    [Buffer.from(STT).toString('hex'), Buffer.from(STT).toString('hex'), BINARY.toString('hex')],
  );
  t.is(s.buffered, 0);
});

test('suntech.frame: a binary report fed byte by byte waits for its length', (t) => {
  const s = suntechProtocol.createSplitter!();
  const out: Buffer[] = [];
  for (const b of BINARY) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(
    out.map((f) => f.toString('hex')),
    [BINARY.toString('hex')],
  );
});

test('suntech.frame: blank bytes between reports are skipped (a CR LF does not end a report: UEX data holds it)', (t) => {
  t.deepEqual(strings(suntechProtocol.createSplitter!().push(Buffer.from(`\n\n  ${STT}\r\x00\n ${STT}\r`))), [
    STT,
    STT,
  ]);
});

test('suntech.frame: a text report longer than the limit is dropped up to its CR, and the next is found', (t) => {
  const s = suntechProtocol.createSplitter!(100);
  t.deepEqual(s.push(Buffer.from(`ST300STT;${'9'.repeat(150)}`)), []);
  t.true(s.buffered <= 100);
  t.deepEqual(strings(s.push(Buffer.from(`${'9'.repeat(50)}\rALV;1\r`))), ['ALV;1']);
});
