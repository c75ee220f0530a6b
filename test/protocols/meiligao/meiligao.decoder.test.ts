import test from 'ava';
import { meiligaoFrame } from '../../../protocols/meiligao/meiligao.encoder.js';
import { meiligaoProtocol } from '../../../protocols/meiligao/meiligao.protocol.js';
import { crc16CcittFalse } from '../../../protocols/shared/crc.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const decode = meiligaoProtocol.decode!;
const hex = (s: string): Buffer => Buffer.from(s, 'hex');
const ctx = (o: Partial<DecodeContext> = {}): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum: 'accept',
  session: {},
  ...o,
});

runVectors(meiligaoProtocol, { now: NOW, everyFrameNamesItsDevice: true });

const ID = hex('12345678901234');

/** A device frame `$$ … CRC CR LF` with a right length and CRC. */
function frame(command: number, data: Buffer, id = ID): Buffer {
  const f = meiligaoFrame(id, command, data);
  f[0] = 0x24;
  f[1] = 0x24;
  f.writeUInt16BE(crc16CcittFalse(f, 0, f.length - 4), f.length - 4);
  return f;
}
const SENTENCE =
  '113118.000,A,1037.9678,N,06121.5679,W,0.54,2.42,300915,,,A*70|0.77|9.9|0000|0000,0000|0000000000000000|14|00000000';

test('meiligao.decoder: CRC-16/CCITT-FALSE matches the catalogue check value and a captured login', (t) => {
  t.is(crc16CcittFalse(Buffer.from('123456789')), 0x29b1);
  t.is(crc16CcittFalse(hex('24240011671440258855405000')), 0xb24d);
});

test('meiligao.decoder: a 14-digit id is also tried as the IMEI with its Luhn digit', (t) => {
  const r = decode(frame(0x5000, Buffer.alloc(0), hex('49015420323751')), ctx());
  t.is(r.identity, '49015420323751');
  t.deepEqual(r.alternativeIdentities, ['490154203237518']);
  const short = decode(frame(0x5000, Buffer.alloc(0), hex('123456ffffffff')), ctx());
  t.is(short.identity, '123456');
  t.is(short.alternativeIdentities, undefined);
});

test('meiligao.decoder: a position is in degrees, km/h and UTC; no answer', (t) => {
  const r = decode(frame(0x9955, Buffer.from(SENTENCE, 'latin1')), ctx({ checksum: 'strict' }));
  const m = r.messages[0];
  t.is(m.fixTime?.toISOString(), '2015-09-30T11:31:18.000Z');
  t.is(m.location?.valid, true);
  t.true(Math.abs((m.location?.latitudeDeg ?? 0) - 10.63279667) < 1e-6);
  t.true(Math.abs((m.location?.longitudeDeg ?? 0) + 61.359465) < 1e-6);
  t.true(Math.abs((m.location?.speedKmh ?? 0) - 0.54 * 1.852) < 1e-9);
  t.is(m.location?.altitudeM, 9.9);
  t.is(m.attributes.hdop, 0.77);
  t.is(m.attributes.rssi, 0x14);
  t.deepEqual(r.replies, []);
});

test('meiligao.decoder: alarm codes map as Traccar maps them, TK218 models by their own table', (t) => {
  const alarm = (code: number, model?: string) =>
    decode(frame(0x9999, Buffer.concat([Buffer.from([code]), Buffer.from(SENTENCE)])), ctx({ ...(model && { model }) }))
      .messages[0];
  t.deepEqual(alarm(0x01).alarms, ['sos']);
  t.deepEqual(alarm(0x13).alarms, ['geofenceEnter']);
  t.deepEqual(alarm(0x13, 'TK218').alarms, ['geofence']);
  t.deepEqual(alarm(0x73).alarms, ['hardAcceleration']);
  t.deepEqual(alarm(0x73, 'TK218').alarms, ['accident']);
  t.deepEqual(alarm(0x99).alarms, []);
  t.is(alarm(0x33).attributes.in3, false, 'the state word, read after the code, wins as in Traccar');
});

test('meiligao.decoder: login and heartbeat are answered 0x4000 01 and 0x0001 01', (t) => {
  t.is(
    decode(frame(0x5000, Buffer.alloc(0)), ctx()).replies[0].toString('hex'),
    meiligaoFrame(ID, 0x4000, hex('01')).toString('hex'),
  );
  const hb = decode(frame(0x0001, Buffer.alloc(0)), ctx());
  t.deepEqual(hb.messages, []);
  t.is(
    hb.replies[0].toString('hex'),
    '4040001212345678901234000101' + meiligaoFrame(ID, 1, hex('01')).subarray(14).toString('hex'),
  );
});

test('meiligao.decoder: a server request is answered with the server setting, or not at all without one', (t) => {
  const request = frame(0x0002, Buffer.alloc(0));
  const answered = decode(request, ctx({ options: { server: '203.0.113.5:5009' } }));
  t.is(answered.replies[0].toString('hex'), meiligaoFrame(ID, 0x0002, Buffer.from('203.0.113.5:5009')).toString('hex'));
  const silent = decode(request, ctx());
  t.deepEqual(silent.replies, []);
  t.regex(silent.warnings?.join() ?? '', /server/);
});

test('meiligao.decoder: a photo upload is acknowledged and dropped; the session keeps only packet sizes', (t) => {
  const c = ctx();
  t.is(
    decode(frame(0x0800, hex('02')), c).replies[0].toString('hex'),
    meiligaoFrame(ID, 0x8801, hex('02')).toString('hex'),
  );
  const chunk = Buffer.alloc(1000, 0xaa);
  for (let i = 0; i < 3; i++) {
    const r = decode(frame(0x9988, Buffer.concat([hex(`02000003${i.toString(16).padStart(2, '0')}`), chunk])), c);
    t.deepEqual(r.messages, []);
    t.deepEqual(r.replies, []);
  }
  decode(frame(0x9988, Buffer.concat([hex('0200000300'), chunk])), c); // decoded twice: counted once
  t.deepEqual(c.session['meiligao.photo'], { image: 2, packets: { 0: 1000, 1: 1000, 2: 1000 } });
  const done = decode(frame(0x0f80, hex('02')), c);
  t.is(done.replies[0].toString('hex'), meiligaoFrame(ID, 0x6688, hex('020000')).toString('hex'));
  t.is(c.session['meiligao.photo'], undefined);
  t.regex(decode(frame(0x9988, hex('0200000300ffd8')), c).warnings?.join() ?? '', /without a photo upload start/);
});

test('meiligao.decoder: a photo over the cap is reported, and still holds no bytes', (t) => {
  const c = ctx();
  decode(frame(0x0800, hex('01')), c);
  const big = Buffer.alloc(60_000);
  let warned = false;
  for (let i = 0; i < 80 && !warned; i++)
    warned =
      (decode(frame(0x9988, Buffer.concat([hex(`01000050${i.toString(16).padStart(2, '0')}`), big])), c).warnings ?? [])
        .length > 0;
  t.true(warned);
  t.true(Object.keys((c.session['meiligao.photo'] as { packets: object }).packets).length <= 256);
});

test('meiligao.decoder: OBD, OBD totals and trouble codes are attributes without a location', (t) => {
  const obd = decode(
    frame(0x9901, Buffer.from('10.1,0,156,0.00,19.61,-34,34.26,21.83,7.91,1033,2.69,6.55,0,0,0')),
    ctx(),
  ).messages[0];
  t.is(obd.location, undefined);
  t.is(obd.attributes.coolantTemp, -34);
  t.is(obd.attributes.odometer, 1033);
  const totals = decode(frame(0x9902, Buffer.from('12,3.5,1.25,4,50,120,4000,7,8')), ctx()).messages[0];
  t.is(totals.attributes.totalHarshBrake, 8);
  t.is(decode(frame(0x9903, Buffer.from('P0100,C1E88')), ctx()).messages[0].attributes.dtcs, 'P0100 C1E88');
});

test('meiligao.decoder: a CRC mismatch is a warning under accept and an error under strict', (t) => {
  const f = frame(0x9955, Buffer.from(SENTENCE));
  f[f.length - 3] ^= 0xff;
  const r = decode(f, ctx());
  t.truthy(r.checksumError);
  t.is(r.messages.length, 1);
  t.throws(() => decode(f, ctx({ checksum: 'strict' })), { instanceOf: ProtocolError });
  t.throws(() => decode(hex('2424001112'), ctx()), { instanceOf: ProtocolError });
});

test('meiligao.decoder: UDP datagrams decode as TCP frames do', (t) => {
  const r = meiligaoProtocol.decodeDatagram!(frame(0x5000, Buffer.alloc(0)), ctx({ transport: 'udp' }));
  t.is(r.replies.length, 1);
});
