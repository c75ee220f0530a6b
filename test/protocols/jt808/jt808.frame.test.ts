import test from 'ava';
import { escapeFrame, Jt808Splitter, unescapeFrame } from '../../../protocols/jt808/jt808.frame.js';
import { jt808Protocol } from '../../../protocols/jt808/jt808.protocol.js';

const hex = (s: string): Buffer => Buffer.from(s, 'hex');
const HEARTBEAT = '7e0002000004304832546500b7ca7e';
const LOCATION = '7e020000220014012499170007000000000000400e012af16f02cbd2ba000000000000150101194257010400000077a97e';
const splitter = (): Jt808Splitter => new Jt808Splitter();

test('jt808.frame: a whole frame in one chunk yields that frame', (t) => {
  t.deepEqual(
    splitter()
      .push(hex(HEARTBEAT))
      .map((f) => f.toString('hex')),
    [HEARTBEAT],
  );
});

test('jt808.frame: a frame split across chunks yields one frame once complete', (t) => {
  const s = splitter();
  t.deepEqual(s.push(hex(LOCATION.slice(0, 30))), []);
  t.true(s.buffered > 0);
  t.deepEqual(
    s.push(hex(LOCATION.slice(30))).map((f) => f.toString('hex')),
    [LOCATION],
  );
  t.is(s.buffered, 0);
});

test('jt808.frame: a frame fed byte by byte yields one frame', (t) => {
  const s = splitter();
  const out: string[] = [];
  for (const b of hex(LOCATION)) out.push(...s.push(Buffer.from([b])).map((f) => f.toString('hex')));
  t.deepEqual(out, [LOCATION]);
});

test('jt808.frame: two frames in one chunk yield two frames', (t) => {
  const frames = splitter()
    .push(hex(HEARTBEAT + LOCATION))
    .map((f) => f.toString('hex'));
  t.deepEqual(frames, [HEARTBEAT, LOCATION]);
});

test('jt808.frame: leading garbage is skipped', (t) => {
  const frames = splitter()
    .push(hex('0011223344' + HEARTBEAT))
    .map((f) => f.toString('hex'));
  t.deepEqual(frames, [HEARTBEAT]);
});

test('jt808.frame: the end of a frame whose start was missed does not swallow the next frame', (t) => {
  // the tail of a lost frame ends with 7E right before the next frame's 7E
  const frames = splitter()
    .push(hex('0102037e' + HEARTBEAT))
    .map((f) => f.toString('hex'));
  t.deepEqual(frames, [HEARTBEAT]);
});

test('jt808.frame: escaping is reversed (Traccar Jt808FrameDecoderTest)', (t) => {
  t.deepEqual(
    splitter()
      .push(hex('7e307d02087d01557e'))
      .map((f) => f.toString('hex')),
    ['7e307e087d557e'],
  );
});

test('jt808.frame: escape and unescape are inverse, for 7E and for the E7 delimiter', (t) => {
  for (const raw of ['7e0102037e7d04057e', 'e70102e7e63d3e04e7']) {
    const frame = hex(raw);
    const escaped = escapeFrame(frame);
    t.false(escaped.subarray(1, -1).includes(frame[0]), raw);
    t.is(unescapeFrame(escaped).toString('hex'), raw);
  }
});

test('jt808.frame: a Jimi text result is a frame of its own', (t) => {
  const text = '(740190311185,1,001,ELOCK,3,529439)';
  const frames = splitter().push(Buffer.concat([Buffer.from(text), hex(HEARTBEAT)]));
  t.deepEqual(
    frames.map((f) => f.toString('latin1')),
    [text, hex(HEARTBEAT).toString('latin1')],
  );
});

test('jt808.frame: oversized input stays bounded and the stream resynchronises', (t) => {
  const s = jt808Protocol.createSplitter!(256);
  t.deepEqual(s.push(Buffer.concat([hex('7e'), Buffer.alloc(1000, 0x11)])), []);
  t.true(s.buffered <= 256);
  t.deepEqual(
    s.push(hex('7e' + HEARTBEAT)).map((f) => f.toString('hex')),
    [HEARTBEAT],
  );
  for (let i = 0; i < 50; i++) {
    s.push(Buffer.alloc(100, 0x28));
    t.true(s.buffered <= 256);
  }
});
