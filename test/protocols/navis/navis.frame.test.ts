import test from 'ava';
import { navisProtocol, navisSplitter } from '../../../protocols/navis/navis.protocol.js';
import { createNavisSplitter } from '../../../protocols/navis/navis.frame.js';
import { BASIC_FIELDS, basicRecord, flex, handshake, negotiation, ntcb } from '../../helpers/navis-frames.js';

const hex = (frames: Buffer[]): string[] => frames.map((f) => f.toString('hex'));
const bytes = (s: string): Buffer => Buffer.from(s, 'hex');

// Traccar NavisFrameDecoderTest.testDecodeFlex10: a FLEX 1.0 layout of 73-byte records
const FLEX10_NEGOTIATION = bytes('404e544301000000aaecf6021300c8712a3e464c4558b00a0a45ffff300a08080f8388');
const FLEX10_T = bytes(
  '7e54040000000400000030129957405c000b00632f9857405ccace03021e129101a103000000000000c4005ba3fe3b00000000120046100000000000001aff7f000080bfffff80000080bfffffffff9f',
);
const FLEX10_A = bytes(
  '7e4101080000000917c057405c002b001833c057405cbbce030225129101a00300007c6102408900400c1b3cfce3b23a12004710e000000000001bff7f000080bfffff80000080bfffffffffb2',
);
const LOGIN = handshake('866795031410689');
const time = new Date(Date.UTC(2026, 0, 1));
const record = basicRecord({ index: 1, time, lat: 1, lon: 2 });

test('navis.frame: an NTCB frame split byte by byte yields one frame', (t) => {
  const s = navisProtocol.createSplitter!();
  const out: Buffer[] = [];
  for (const b of LOGIN) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(hex(out), hex([LOGIN]));
  t.is(s.buffered, 0);
});

test('navis.frame: the splitter reads the *>FLEX it passes and then cuts FLEX packets by that layout', (t) => {
  const s = navisProtocol.createSplitter!();
  // no layout yet: the packet cannot be cut, its bytes are garbage (a 0x7F among them is a harmless keep-alive)
  t.deepEqual(
    s.push(FLEX10_T).filter((f) => f[0] !== 0x7f),
    [],
  );
  const s2 = navisProtocol.createSplitter!();
  const stream = Buffer.concat([LOGIN, FLEX10_NEGOTIATION, FLEX10_T, FLEX10_A]);
  const out: Buffer[] = [];
  for (let i = 0; i < stream.length; i += 7) out.push(...s2.push(stream.subarray(i, i + 7)));
  t.deepEqual(hex(out), hex([LOGIN, FLEX10_NEGOTIATION, FLEX10_T, FLEX10_A]));
  t.is(s2.buffered, 0);
});

test('navis.frame: flexDataSize (Traccar setFlexDataSize) cuts FLEX packets without a negotiation', (t) => {
  const s = createNavisSplitter({ flexDataSize: 73 });
  t.deepEqual(hex(s.push(Buffer.concat([FLEX10_T, FLEX10_A]))), hex([FLEX10_T, FLEX10_A]));
  const viaOption = navisSplitter(undefined, { flexDataSize: '73' });
  t.deepEqual(hex(viaOption.push(FLEX10_A)), hex([FLEX10_A]));
});

test('navis.frame: a new negotiation changes the layout for the packets after it', (t) => {
  const s = createNavisSplitter({ flexDataSize: 73 });
  const c = flex('~C', record);
  const a = flex('~A', Buffer.concat([Buffer.from([2]), record, record]));
  const t2 = flex('~T', Buffer.concat([bytes('01000000'), record]));
  const frames = [negotiation(BASIC_FIELDS), c, a, t2];
  t.deepEqual(hex(s.push(Buffer.concat(frames))), hex(frames));
});

test('navis.frame: keep-alives, NTCB and FLEX frames in one chunk', (t) => {
  const s = createNavisSplitter();
  const frames = [Buffer.from([0x7f]), negotiation(BASIC_FIELDS), Buffer.from([0x7f]), flex('~C', record), ntcb('')];
  t.deepEqual(hex(s.push(Buffer.concat(frames))), hex(frames));
});

test('navis.frame: FLEX 2.0 ~E and ~X are cut by their record lengths', (t) => {
  const s = createNavisSplitter({ flexDataSize: 31 });
  const rec = Buffer.concat([bytes('0005'), bytes('0a03010203')]);
  const e = flex('~E', Buffer.concat([Buffer.from([2]), rec, rec]));
  const x = flex('~X', Buffer.concat([bytes('09000000'), rec]));
  const out: Buffer[] = [];
  const stream = Buffer.concat([e, x]);
  for (const b of stream) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(hex(out), hex([e, x]));
});

test('navis.frame: garbage before a frame is skipped, a bad NTCB prefix too', (t) => {
  const s = createNavisSplitter();
  const junk = Buffer.concat([bytes('0001ff7e5a40'), bytes('4000ffff'), Buffer.from('hello')]);
  t.deepEqual(hex(s.push(Buffer.concat([junk, LOGIN]))), hex([LOGIN]));
  t.is(s.buffered, 0);
});

test('navis.frame: the buffer never holds more than the largest frame', (t) => {
  const s = createNavisSplitter({ maxFrameBytes: 1000, flexDataSize: 100 });
  t.deepEqual(s.push(bytes('7e41ff')), [], '3 + 255 * 100 + 1 bytes: longer than 1000, skipped');
  t.deepEqual(s.push(bytes('404e5443010000000000000000f0')), [], 'an NTCB header claiming 61 KiB');
  s.push(Buffer.alloc(3000, 0x7e));
  t.true(s.buffered <= 1000);
  const e = createNavisSplitter({ maxFrameBytes: 100, flexDataSize: 1 });
  e.push(Buffer.concat([bytes('7e45ff'), Buffer.alloc(300, 0)]));
  t.true(e.buffered <= 100, 'a ~E whose records never end');
  t.true(navisProtocol.maxFrameBytes >= 4 + 255 * 733, 'every ~A of the largest layout fits');
});
