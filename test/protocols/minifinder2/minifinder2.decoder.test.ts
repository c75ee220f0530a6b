import test from 'ava';
import { minifinder2Frame } from '../../../protocols/minifinder2/minifinder2.decoder.js';
import { minifinder2Protocol } from '../../../protocols/minifinder2/minifinder2.protocol.js';
import { crc16Xmodem } from '../../../protocols/shared/crc.js';
import { ProtocolError, type DecodeContext, type DecodeResult } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
/** NOW in UNIX seconds, u32 LE: 1767323045 */
const NOW_LE = 'a5355769';
const IMEI = '861629050625098';
const decode = minifinder2Protocol.decode!;
const ctx = (o: Partial<DecodeContext> = {}): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum: 'accept',
  session: {},
  ...o,
});
const hex = (s: string): Buffer => Buffer.from(s.replace(/ /g, ''), 'hex');
const replies = (r: DecodeResult): string[] => r.replies.map((b) => b.toString('hex'));

runVectors(minifinder2Protocol, {
  now: NOW,
  differences: {
    10: {
      reason: 'the ack is described, not given: a services request for key 0x10 only gets the plain 7F 01 00',
      instead(t, d) {
        const r = d();
        t.deepEqual(replies(r), ['ab00030008c732007f0100'], 'no service the server provides: success');
        t.is(r.identity, '355465071029306');
      },
    },
    11: {
      reason: 'the ack is described, not given: the services answer carries the time now (key 0x12)',
      instead(t, d) {
        const r = d();
        t.deepEqual(replies(r), [`ab0007009bc9010003 0512${NOW_LE}`.replace(/ /g, '')], 'time from ctx.now');
        t.is(r.identity, '863922034473745');
      },
    },
  },
});

/** a device frame: header with `flags`, the content's length and CRC, sequence id 0x1234 */
function frame(content: Buffer, flags = 0x10, sequence = 0x1234): Buffer {
  const f = minifinder2Frame(sequence, content);
  f[1] = flags;
  return f;
}
const imei = (id = IMEI): Buffer => Buffer.concat([hex('1001'), Buffer.from(id, 'latin1')]);

test('minifinder2.decoder: a data frame acks 7F 01 00 with its sequence id and the XMODEM CRC', (t) => {
  const r = decode(frame(Buffer.concat([hex('01'), imei()])), ctx({ checksum: 'strict' }));
  t.is(r.identity, IMEI);
  const ack = hex('ab00 0300 0000 3412 7f0100');
  ack.writeUInt16LE(crc16Xmodem(hex('7f0100')), 4);
  t.deepEqual(replies(r), [ack.toString('hex')]);
  t.deepEqual(replies(decode(frame(Buffer.concat([hex('01'), imei()]), 0x00), ctx())), [], 'flag bit 4 clear');
});

test('minifinder2.decoder: a services request answers zeroed position (0x11) and time now (0x12) in its order', (t) => {
  const r = decode(frame(Buffer.concat([hex('03'), imei(), hex('0111 0112 0113')])), ctx());
  const content = hex(`03 0a11 0000000000000000 00 0512 ${NOW_LE}`);
  t.deepEqual(replies(r), [minifinder2Frame(0x1234, content).toString('hex')]);
});

test('minifinder2.decoder: GPS, status, battery and steps records; a repeated key starts a new position', (t) => {
  const gps = (lat: number, lon: number, hdop: number): Buffer => {
    const b = Buffer.alloc(23);
    b.writeUInt8(22, 0);
    b.writeUInt8(0x20, 1);
    b.writeInt32LE(lat * 1e7, 2);
    b.writeInt32LE(lon * 1e7, 6);
    b.writeUInt16LE(36, 10); // km/h
    b.writeUInt16LE(270, 12);
    b.writeInt16LE(-5, 14);
    b.writeUInt16LE(hdop, 16);
    b.writeUInt32LE(1234, 18);
    b.writeUInt8(7, 22);
    return b;
  };
  const status = (seconds: number, bits: number): Buffer => {
    const b = hex('0924 00000000 00000000');
    b.writeUInt32LE(seconds, 2);
    b.writeUInt32LE(bits, 6);
    return b;
  };
  const content = Buffer.concat([
    hex('01'),
    imei(),
    status(1767323000, (55 << 24) | (21 << 19) | (1 << 9) | (1 << 4)),
    gps(59.3293, 18.0686, 12),
    hex('0414 4b a00f'),
    hex('0930 00000000 e8030000'),
    status(1767323010, 0),
    hex('0902 01100000 00000000'),
  ]);
  const r = decode(frame(content), ctx());
  t.is(r.messages.length, 2);
  const [a, b] = r.messages;
  t.is(a.fixTime?.toISOString(), '2026-01-02T03:03:20.000Z');
  t.like(a.location, {
    latitudeDeg: 59.3293,
    longitudeDeg: 18.0686,
    valid: true,
    speedKmh: 36,
    courseDeg: 270,
    altitudeM: -5,
  });
  t.like(a.attributes, { batteryLevel: 75, battery: 4, steps: 1000, motion: true, charge: true, rssi: 21, hdop: 1.2 });
  t.deepEqual(b.alarms, ['lowBattery', 'sos']);
  t.deepEqual(
    b.location,
    { latitudeDeg: 0, longitudeDeg: 0, valid: false },
    'no fix and no HDOP: (0, 0) without a fix, as the reference before a last known place',
  );
  t.is(b.attributes.event, 0x1001);
});

test('minifinder2.decoder: alarm bits through the table, geofence enter and exit, device time', (t) => {
  const alarm = (bits: number): DecodeResult => {
    const b = hex('0902 00000000 a5355769');
    b.writeUInt32LE(bits >>> 0, 2);
    return decode(frame(Buffer.concat([hex('01'), imei(), b])), ctx());
  };
  t.deepEqual(alarm(0b111).messages[0].alarms, ['lowBattery', 'overspeed', 'fallDown']);
  t.deepEqual(alarm((1 << 8) | (1 << 9) | (1 << 10)).messages[0].alarms, ['powerOff', 'powerOn', 'movement']);
  const geo = alarm((1 << 5) | (1 << 27) | (1 << 6)).messages[0];
  t.deepEqual(geo.alarms, ['geofenceEnter', 'geofenceExit']);
  t.is(geo.attributes.geofence, 3);
  t.is(geo.fixTime?.toISOString(), NOW.toISOString());
  t.like(alarm((1 << 13) | (1 << 14) | (2 ** 31)).messages[0].attributes, { button1: true, button2: true, bark: true });
});

test('minifinder2.decoder: cells, Wi-Fi and a beacon with its place', (t) => {
  const content = hex(
    '01' +
      imei().toString('hex') +
      '0e21 f000 01 c4 3412 7856 c2 3512 7956' + // mcc 240, mnc 1, two towers
      '0822 c5 aabbccddeeff' + // one access point
      '1228 80 010203040506 c8 c4 00e1f505 00c2eb0b', // beacon 1 at 10, 20
  );
  const m = decode(frame(content), ctx()).messages[0];
  t.deepEqual(JSON.parse(String(m.attributes.network)).cellTowers, [
    { locationAreaCode: 0x1234, cellId: 0x5678, mobileCountryCode: 240, mobileNetworkCode: 1, signalStrength: -60 },
    { locationAreaCode: 0x1235, cellId: 0x5679, mobileCountryCode: 240, mobileNetworkCode: 1, signalStrength: -62 },
  ]);
  t.deepEqual(JSON.parse(String(m.attributes.network)).wifiAccessPoints, [
    { macAddress: 'aa:bb:cc:dd:ee:ff', signalStrength: -59 },
  ]);
  t.like(m.attributes, { tagId1: '060504030201', tagRssi1: -56, tag1mRssi1: -60 });
  t.like(m.location, { latitudeDeg: 10, longitudeDeg: 20, valid: true });
});

test('minifinder2.decoder: a frame without the IMEI gives no positions but is still acked', (t) => {
  const r = decode(frame(hex('01 0414 4b a00f')), ctx({ deviceId: IMEI }));
  t.deepEqual(r.messages, []);
  t.is(r.replies.length, 1);
});

test("minifinder2.decoder: response, configuration and system control are the connection device's reports", (t) => {
  const response = decode(frame(hex('7f 0100'), 0), ctx({ deviceId: IMEI }));
  t.deepEqual(response.messages, [{ alarms: [], attributes: { result: '0' } }]);
  t.deepEqual(decode(frame(hex('7f 0100'), 0), ctx()).messages, [], 'no device yet');
  const config = decode(frame(hex('02 0414 00 0fa0 020e fe 0543 00 1f90 31'), 0), ctx({ deviceId: IMEI }));
  t.deepEqual(config.messages[0].attributes, { batteryLevel: 0, battery: 4, timeZone: -2, port: 8080, server: '1' });
  const control = decode(frame(Buffer.concat([hex('04 051f 01'), Buffer.from('ok!')]), 0), ctx({ deviceId: IMEI }));
  t.deepEqual(control.messages[0].attributes, { result: 'ok!' });
  t.deepEqual(control.commandResults, [{ text: 'ok!' }]);
});

test('minifinder2.decoder: a bad CRC is a warning, or an error when strict; a truncated record throws', (t) => {
  const f = frame(Buffer.concat([hex('01'), imei()]));
  f[4] ^= 1;
  t.truthy(decode(f, ctx()).checksumError);
  t.throws(() => decode(f, ctx({ checksum: 'strict' })), { instanceOf: ProtocolError });
  t.throws(() => decode(frame(Buffer.concat([hex('01'), imei(), hex('0920 0000')])), ctx()), {
    instanceOf: ProtocolError,
  });
  t.throws(() => decode(hex('ab10'), ctx()), { instanceOf: ProtocolError });
});
