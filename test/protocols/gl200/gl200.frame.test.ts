import test from 'ava';
import { gl200Protocol } from '../../../protocols/gl200/gl200.protocol.js';

const fri =
  '+RESP:GTFRI,020102,135790246811220,,0,0,1,1,4.3,92,70.0,121.354335,31.222073,20090214013254,0460,0000,18d8,6141,00,,20090214093254,11F0';
const hbd = '+ACK:GTHBD,1A0401,135790246811220,,20100214093254,11F0';
const evt = Buffer.from(
  '2b4556540c00fc1fbf005c4501010108563254030003430564312a41090100000000003f007dff75a11a025c6a7807e1070a14041202680003189c1ac500000000000000000000000000000000000007e1070b041134054e5c6e0d0a',
  'hex',
);
const split = () => gl200Protocol.createSplitter!();
const text = (frames: Buffer[]): string[] => frames.map((f) => f.toString('latin1'));

test('gl200.frame: two text reports in one chunk yield two frames, without their $', (t) => {
  t.deepEqual(text(split().push(Buffer.from(`${fri}$${hbd}$`))), [fri, hbd]);
});

test('gl200.frame: NUL ends a text frame as $ does', (t) => {
  t.deepEqual(text(split().push(Buffer.from(`${fri}\0${hbd}$`))), [fri, hbd]);
});

test('gl200.frame: a report split across chunks is held until its $', (t) => {
  const s = split();
  t.deepEqual(s.push(Buffer.from(fri.substring(0, 40))), []);
  t.is(s.buffered, 40);
  t.deepEqual(text(s.push(Buffer.from(`${fri.substring(40)}$`))), [fri]);
  t.is(s.buffered, 0);
});

test('gl200.frame: a binary frame is cut at the length its header gives, also between text frames', (t) => {
  const out = split().push(Buffer.concat([Buffer.from(`${fri}$`), evt, Buffer.from(`${hbd}$`)]));
  t.deepEqual(
    out.map((f) => f.toString('hex')),
    [Buffer.from(fri).toString('hex'), evt.toString('hex'), Buffer.from(hbd).toString('hex')],
  );
});

test('gl200.frame: fed byte by byte, text and binary frames each come out once', (t) => {
  const s = split();
  const out: Buffer[] = [];
  for (const b of Buffer.concat([evt, Buffer.from(`${fri}$${hbd}$`), evt])) out.push(...s.push(Buffer.from([b])));
  t.deepEqual(
    out.map((f) => f.toString('hex')),
    [evt, Buffer.from(fri), Buffer.from(hbd), evt].map((b) => b.toString('hex')),
  );
  t.is(s.buffered, 0);
});

test('gl200.frame: a frame whose second byte is 0 is as long as the u16 at offset 2', (t) => {
  const frame = Buffer.concat([Buffer.from([0x2b, 0x00, 0x00, 0x10]), Buffer.alloc(12, 0x41)]);
  const s = split();
  t.deepEqual(s.push(frame.subarray(0, 10)), []);
  t.deepEqual(
    s.push(Buffer.concat([frame.subarray(10), Buffer.from(`${hbd}$`)])).map((f) => f.toString('hex')),
    [frame.toString('hex'), Buffer.from(hbd).toString('hex')],
  );
});

test('gl200.frame: line endings and control bytes between frames are skipped; other leading noise stays for the decoder', (t) => {
  const out = text(split().push(Buffer.from(`\r\n\x01${fri}$\r\nxy${hbd}$\r\n`)));
  t.deepEqual(out, [fri, `xy${hbd}`]);
  t.deepEqual(
    gl200Protocol.decode!(Buffer.from(out[1]), {
      now: new Date(),
      transport: 'tcp',
      checksum: 'accept',
      session: {},
    }).replies.map(String),
    ['+SACK:GTHBD,1A0401,11F0$'],
  );
});

test('gl200.frame: an endless text frame is dropped at maxFrameBytes and the next one is found', (t) => {
  const s = split();
  const max = gl200Protocol.maxFrameBytes;
  for (let i = 0; i < 10; i++) {
    t.deepEqual(s.push(Buffer.from('+' + 'A'.repeat(max / 2))), []);
    t.true(s.buffered <= max);
  }
  t.deepEqual(text(s.push(Buffer.from(`AAAA$${fri}$`))), [fri]);
});

test('gl200.frame: a binary length below 11 or above maxFrameBytes is no frame; the search moves on', (t) => {
  const s = split();
  const bogus = Buffer.from('2b4556540c00fc1fbfffff', 'hex'); // +EVT claiming 65535 bytes
  t.deepEqual(
    text(s.push(Buffer.concat([bogus, Buffer.from(`${fri}$`)]))).map((f) => f.slice(-10)),
    [fri.slice(-10)],
  );
});
