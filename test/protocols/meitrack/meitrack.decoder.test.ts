import test from 'ava';
import { meitrackProtocol } from '../../../protocols/meitrack/meitrack.protocol.js';
import { ProtocolError, type DecodeContext, type DecodeResult } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';
import { frameBytes, loadVectors } from '../../helpers/vectors.js';
import { meitrackAaa, meitrackCcc, meitrackFrame, sum8 } from '../../helpers/meitrack-frames.js';

const NOW = new Date();
runVectors(meitrackProtocol, { now: NOW, everyFrameNamesItsDevice: true });

const IMEI = '356307042441013';
const ctx = (over: Partial<DecodeContext> = {}): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum: 'accept',
  session: {},
  ...over,
});
const decode = (b: Buffer | string, c = ctx()): DecodeResult =>
  meitrackProtocol.decode!(typeof b === 'string' ? Buffer.from(b, 'latin1') : b, c);
const fix = (i: number) => ({
  time: new Date(Date.UTC(2026, 2, 1, 10, 0, i)),
  lat: 40.4168,
  lon: -3.7038,
  speedKmh: 42,
  course: 90,
});

test('meitrack.decoder: the byte-sum checksum agrees with every captured frame the vectors label', (t) => {
  const labelled = loadVectors('meitrack').filter((v) => v.test_kind === 'decoder' && v.checksum_ok !== undefined);
  t.true(labelled.length > 30);
  for (const v of labelled.filter((x) => x.checksum_ok !== undefined)) {
    const r = meitrackProtocol.decode!(frameBytes(v), ctx());
    t.is(r.checksumError === undefined, v.checksum_ok === true, `line ${v.line}: ${r.checksumError ?? 'ok'}`);
  }
});

test('meitrack.decoder: a checksum mismatch is accepted with a warning, or refused when strict', (t) => {
  const frame = meitrackAaa(IMEI, fix(0));
  frame[frame.length - 3] = 0x30; // one checksum digit changed
  const r = decode(frame);
  t.regex(r.checksumError ?? '', /checksum/);
  t.is(r.messages.length, 1);
  t.throws(() => decode(frame, ctx({ checksum: 'strict' })), { instanceOf: ProtocolError });
  t.is(decode(meitrackAaa(IMEI, fix(0)), ctx({ checksum: 'strict' })).messages.length, 1, 'a good frame passes strict');
});

test('meitrack.decoder: an AAA report is a position in km/h with its event, and event codes become alarms', (t) => {
  const r = decode(meitrackAaa(IMEI, fix(5), 35));
  t.is(r.identity, IMEI);
  const [m] = r.messages;
  t.is(m.fixTime?.toISOString(), '2026-03-01T10:00:05.000Z');
  t.like(m.location, {
    latitudeDeg: 40.4168,
    longitudeDeg: -3.7038,
    valid: true,
    speedKmh: 42,
    courseDeg: 90,
    altitudeM: 120,
    satellites: 9,
  });
  t.deepEqual(m.alarms, []);
  t.like(m.attributes, { event: 35, odometer: 15000, power: 13.95 });
  t.deepEqual(r.replies, [], 'reports get no reply');
  const alarms = (event: number) => decode(meitrackAaa(IMEI, fix(0), event)).messages[0].alarms;
  t.deepEqual(alarms(1), ['sos']);
  t.deepEqual(alarms(17), ['lowBattery']);
  t.deepEqual(alarms(19), ['overspeed']);
  t.deepEqual(alarms(20), ['geofenceEnter']);
  t.deepEqual(alarms(23), ['powerCut']);
  t.deepEqual(alarms(36), ['tow']);
  t.deepEqual(alarms(129), ['hardBraking']);
});

test('meitrack.decoder: the hex battery and power analogs follow the device model', (t) => {
  const frame = meitrackAaa(IMEI, fix(0));
  t.like(decode(frame).messages[0].attributes, { battery: 0x191 / 100, power: 0x573 / 100 });
  const mvt380 = decode(frame, ctx({ model: 'MVT380' })).messages[0].attributes;
  t.true(Math.abs((mvt380.power as number) - (0x573 * 3 * 16) / 1024) < 1e-9);
});

test('meitrack.decoder: a CCC batch is every packet, acknowledged @@<flag><len>,<imei>,CCC,<n>*XX', (t) => {
  const r = decode(meitrackCcc(IMEI, [fix(0), fix(1), fix(2)], 'U'));
  t.is(r.identity, IMEI);
  t.deepEqual(
    r.messages.map((m) => m.fixTime?.toISOString()),
    ['2026-03-01T10:00:00.000Z', '2026-03-01T10:00:01.000Z', '2026-03-01T10:00:02.000Z'],
  );
  t.like(r.messages[0].location, {
    latitudeDeg: 40.4168,
    longitudeDeg: -3.7038,
    speedKmh: 42,
    courseDeg: 90,
    valid: true,
  });
  const head = `@@U27,${IMEI},CCC,3*`;
  t.deepEqual(
    r.replies.map((b) => b.toString('latin1')),
    [`${head}${sum8(Buffer.from(head))}\r\n`],
  );
});

test('meitrack.decoder: the CCC acknowledgement length counts the digits of a two-digit count', (t) => {
  const fixes = Array.from({ length: 21 }, (_, i) => fix(i));
  const [ack] = decode(meitrackCcc(IMEI, fixes, 'U')).replies.map((b) => b.toString('latin1'));
  t.regex(ack, new RegExp(`^@@U28,${IMEI},CCC,21\\*[0-9A-F]{2}\\r\\n$`));
  t.is(ack.length - ack.indexOf(','), 28, 'from the first comma through CR LF');
});

test('meitrack.decoder: a CCE packet with an event code raises its alarm', (t) => {
  // one packet: index; one 1-byte parameter (0x01 event = 1, SOS); none of 2 bytes; three of 4 bytes
  // (0x02 latitude, 0x03 longitude in millionths, 0x04 seconds since 2000); no variable ones
  const four = (id: number, v: number) =>
    Buffer.from([id, v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff]);
  const packet = Buffer.concat([
    Buffer.from([0x01, 0x00, 0x01, 0x01, 0x01, 0x00, 0x03]),
    four(0x02, 40416800),
    four(0x03, -3703800),
    four(0x04, Date.UTC(2026, 2, 1, 10) / 1000 - 946_684_800),
    Buffer.from([0x00]),
  ]);
  const body = Buffer.concat([
    Buffer.from('CCE,'),
    Buffer.from('000000000100', 'hex'),
    Buffer.from([packet.length, 0]),
    packet,
  ]);
  const r = decode(meitrackFrame('b', IMEI, body));
  t.deepEqual(r.messages[0].alarms, ['sos']);
  t.like(r.messages[0].location, { latitudeDeg: 40.4168, longitudeDeg: -3.7038 });
  t.is(r.messages[0].fixTime?.toISOString(), '2026-03-01T10:00:00.000Z');
  t.deepEqual(r.replies, []);
});

test('meitrack.decoder: an answer repeating flag and command word is a command result; plain OK stores nothing', (t) => {
  const ok = decode(meitrackFrame('M', IMEI, 'C01,OK'));
  t.deepEqual(ok.commandResults, [{ text: 'C01,OK', command: 'C01', flag: 'M' }]);
  t.deepEqual(ok.messages, []);
  t.is(ok.identity, IMEI);
  const data = decode(meitrackFrame('Q', IMEI, 'E91,FW_V1.2'));
  t.deepEqual(data.commandResults, [{ text: 'E91,FW_V1.2', command: 'E91', flag: 'Q' }]);
  t.deepEqual(
    data.messages.map((m) => m.attributes.result),
    ['E91,FW_V1.2'],
  );
});

test('meitrack.decoder: AAC is answered @@z27,<imei>,AAC,1*XX and stores nothing', (t) => {
  const r = decode(meitrackFrame('z', IMEI, 'AAC,1'));
  const head = `@@z27,${IMEI},AAC,1*`;
  t.deepEqual(
    r.replies.map((b) => b.toString('latin1')),
    [`${head}${sum8(Buffer.from(head))}\r\n`],
  );
  t.deepEqual(r.messages, []);
});

test('meitrack.decoder: a datagram is decoded like a TCP frame', (t) => {
  const frame = meitrackCcc(IMEI, [fix(0)]);
  t.deepEqual(meitrackProtocol.decodeDatagram!(frame, ctx({ transport: 'udp' })), decode(frame));
});

test('meitrack.decoder: what is no $$ frame, or a report with impossible coordinates, throws ProtocolError', (t) => {
  t.throws(() => decode('GET / HTTP/1.1\r\n'), { instanceOf: ProtocolError });
  t.throws(() => decode(meitrackAaa(IMEI, { ...fix(0), lat: 95 })), { instanceOf: ProtocolError });
  t.throws(() => decode(meitrackFrame('A', IMEI, Buffer.concat([Buffer.from('CCC,'), Buffer.alloc(4)]))), {
    instanceOf: ProtocolError,
  });
});
