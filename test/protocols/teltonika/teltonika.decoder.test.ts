import test from 'ava';
import { teltonikaProtocol } from '../../../protocols/teltonika/teltonika.protocol.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { teltonikaFrame } from '../../helpers/frames.js';
import { decodeVector, runVectors } from '../../helpers/vector-runner.js';

const vectors = loadVectors('teltonika');
const NOW = new Date();

runVectors(teltonikaProtocol, {
  now: NOW,
  differences: {
    36: {
      reason:
        "needs Traccar's server-wide teltonika.extended (a 16-byte IO group no device announces), which trackgate does not offer (README)",
      // read without it, the records after the first are misaligned: the frame is refused as malformed, and nothing of it stored
      instead: (t, decode) => void t.throws(decode, { instanceOf: ProtocolError, message: /record time out of range/ }),
    },
  },
});

const ctx = (over: Partial<DecodeContext> = {}): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum: 'accept',
  session: {},
  ...over,
});
const imeiLogin = (imei: string): Buffer =>
  Buffer.concat([Buffer.from([0x00, imei.length]), Buffer.from(imei, 'latin1')]);
const firstAvl = (): Buffer =>
  frameBytes(
    vectors.find(
      (v) =>
        v.test_kind === 'decoder' &&
        v.transport === 'tcp' &&
        v.crc_ok === true &&
        String(v.frame).startsWith('00000000') &&
        v.ack,
    )!,
  );

test('teltonika.decoder: an IMEI login names the device, replies 01 and rejects with 00', (t) => {
  const r = teltonikaProtocol.decode!(imeiLogin('356307042441013'), ctx());
  t.is(r.identity, '356307042441013');
  t.deepEqual(r.messages, []);
  t.deepEqual(r.replies, [Buffer.from([0x01])]);
  t.deepEqual(r.rejection, Buffer.from([0x00]));
});

test('teltonika.decoder: a 0xFF ping yields nothing and no reply', (t) => {
  t.deepEqual(teltonikaProtocol.decode!(Buffer.from([0xff]), ctx()), { messages: [], replies: [] });
});

test('teltonika.decoder: a CRC mismatch is a warning by default and an error when strict', (t) => {
  const frame = Buffer.from(firstAvl());
  frame[frame.length - 1] ^= 0xff;
  const r = teltonikaProtocol.decode!(frame, ctx());
  t.true(r.messages.length > 0);
  t.true((r.warnings ?? []).some((w) => w.includes('CRC')));
  t.throws(() => teltonikaProtocol.decode!(frame, ctx({ checksum: 'strict' })), { instanceOf: ProtocolError });
});

test('teltonika.decoder: a truncated AVL packet throws ProtocolError', (t) => {
  const frame = firstAvl();
  for (const cut of [5, 11, 20, Math.floor(frame.length / 2)]) {
    t.throws(
      () => teltonikaProtocol.decode!(frame.subarray(0, cut), ctx()),
      { instanceOf: ProtocolError },
      `cut at ${cut}`,
    );
  }
});

test('teltonika.decoder: FM-only alarms need a known FM model', (t) => {
  const v = vectors.find((x) =>
    (x as unknown as { alarm_io_hits?: { model_gated: boolean }[] }).alarm_io_hits?.some((h) => h.model_gated),
  )!;
  const without = teltonikaProtocol.decode!(frameBytes(v), ctx());
  const withModel = teltonikaProtocol.decode!(frameBytes(v), ctx({ model: 'FMB920' }));
  t.false(without.messages.some((m) => m.alarms.includes('accident')));
  t.true(withModel.messages.some((m) => m.alarms.includes('accident')));
});

test('teltonika.decoder: IO elements become Traccar attributes in their units', (t) => {
  // Codec 8, one record: 239=1, 240=1, 21=4 | 66=12345 mV, 67=4012 mV, 181=12, 182=9 | 16=123456 m
  const data = Buffer.from(
    '0801' +
      '0000018c2b1e3a00' +
      '00' +
      '0ba0d2c0' +
      '1c9c3800' +
      '0064' +
      '005a' +
      '09' +
      '0032' +
      '00' +
      '08' +
      '03' +
      'ef01' +
      'f001' +
      '1504' +
      '04' +
      '423039' +
      '430fac' +
      'b5000c' +
      'b60009' +
      '01' +
      '100001e240' +
      '00' +
      '01',
    'hex',
  );
  const r = teltonikaProtocol.decode!(teltonikaFrame(data), ctx());
  t.is(r.warnings, undefined);
  const m = r.messages[0];
  t.like(m.attributes, {
    ignition: true,
    motion: true,
    rssi: 4,
    power: 12.345,
    battery: 4.012,
    pdop: 1.2,
    hdop: 0.9,
    odometer: 123456,
  });
  t.like(m.location!, { speedKmh: 50, courseDeg: 90, altitudeM: 100, satellites: 9, valid: true });
  t.deepEqual(r.replies, [Buffer.from('00000001', 'hex')]);
});

test('teltonika.decoder: codec 12 and 13 responses get no ack', (t) => {
  for (const v of vectors.filter(
    (x) =>
      x.test_kind === 'decoder' &&
      /^0{8}/.test(String(x.frame)) &&
      /^(0c|0d)$/i.test(String(x.frame).substring(16, 18)),
  )) {
    t.deepEqual(decodeVector(teltonikaProtocol, v, NOW).replies, [], `line ${v.line}`);
  }
});

test('teltonika.decoder: a UDP datagram names its device and acks with its AVL packet id', (t) => {
  const v = vectors.find((x) => x.transport === 'udp' && x.test_kind === 'decoder')!;
  const r = decodeVector(teltonikaProtocol, v, NOW);
  t.regex(r.identity ?? '', /^\d{15}$/);
  t.true(r.messages.length > 0);
});

test('teltonika.decoder: BLE tag names end at their first NUL (sensors pad them)', (t) => {
  // Codec 8E, one record without fixed-width IO, one NX element 548 (BLE tags): header, then two
  // tags with parameter 5 (name): "TAG1" padded with four NULs, and "AB", NUL, "CD", NUL.
  const tag = (name: Buffer): string => {
    const body = Buffer.concat([Buffer.from([5, name.length]), name]);
    return Buffer.concat([Buffer.from([body.length]), body]).toString('hex');
  };
  const tags = '01' + tag(Buffer.from('TAG1\0\0\0\0', 'latin1')) + tag(Buffer.from('AB\0CD\0', 'latin1'));
  const nx = '0001' + '0224' + (tags.length / 2).toString(16).padStart(4, '0') + tags;
  const record =
    '0000018c2b1e3a00' +
    '00' +
    '0ba0d2c0' +
    '1c9c3800' +
    '0064' +
    '005a' +
    '09' +
    '0032' +
    '0000' +
    '0001' +
    '0000'.repeat(4) +
    nx;
  const data = Buffer.from('8e01' + record + '01', 'hex');
  const r = teltonikaProtocol.decode!(teltonikaFrame(data), ctx());
  t.is(r.warnings, undefined);
  t.is(r.messages[0].attributes.tag1Name, 'TAG1');
  t.is(r.messages[0].attributes.tag2Name, 'AB');
});
