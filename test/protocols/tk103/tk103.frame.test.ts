import test from 'ava';
import { tk103Protocol } from '../../../protocols/tk103/tk103.protocol.js';

const br00 = '(088047365460BR00151024A2555.3531S02855.3329E004.7055148276.1701000000L00009AA3)';
const bp05 = '(088048003342BP05354188048003342150917A1352.9801N10030.9050E000.0103115265.5600010000L000003F9)';
const freeText = '(864555555555555,ZC03,191117,234207,$Notice: (x) done$)';
const split = () => tk103Protocol.createSplitter!();
const text = (frames: Buffer[]): string[] => frames.map((f) => f.toString('latin1'));

test('tk103.frame: two sentences in one chunk yield two frames', (t) => {
  t.deepEqual(text(split().push(Buffer.from(br00 + bp05))), [br00, bp05]);
});

test('tk103.frame: a ) inside $ free text does not end the frame', (t) => {
  t.deepEqual(text(split().push(Buffer.from(freeText + br00))), [freeText, br00]);
});

test('tk103.frame: a sentence split across chunks is held until its )', (t) => {
  const s = split();
  t.deepEqual(s.push(Buffer.from(bp05.substring(0, 30))), []);
  t.is(s.buffered, 30);
  t.deepEqual(text(s.push(Buffer.from(bp05.substring(30)))), [bp05]);
  t.is(s.buffered, 0);
});

test('tk103.frame: fed byte by byte, every sentence comes out once', (t) => {
  const s = split();
  const out: Buffer[] = [];
  for (const b of Buffer.from(br00 + freeText + bp05)) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(text(out), [br00, freeText, bp05]);
});

test('tk103.frame: garbage before a ( is skipped, CR LF between sentences too', (t) => {
  t.deepEqual(text(split().push(Buffer.from('garbage$)))\r\n' + br00 + '\r\n' + bp05))), [br00, bp05]);
});

test('tk103.frame: an unfinished sentence past maxFrameBytes is given up and the next one found', (t) => {
  const s = tk103Protocol.createSplitter!(128);
  t.deepEqual(s.push(Buffer.from('(' + 'x'.repeat(200))), []);
  t.true(s.buffered <= 128);
  t.deepEqual(text(s.push(Buffer.from(br00))), [br00]);
});
