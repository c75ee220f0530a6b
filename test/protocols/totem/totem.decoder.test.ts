import test from 'ava';
import { totemProtocol } from '../../../protocols/totem/totem.protocol.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const decode = totemProtocol.decode!;
const ctx = (checksum: 'accept' | 'strict' = 'accept'): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum,
  session: {},
});
const text = (s: string): Buffer => Buffer.from(s, 'latin1');
/** `s` and the XOR of its characters as 2 upper-case hex digits */
const ack = (s: string): string =>
  s +
  [...s]
    .reduce((x, c) => x ^ c.charCodeAt(0), 0)
    .toString(16)
    .toUpperCase()
    .padStart(2, '0');

runVectors(totemProtocol, { now: NOW, everyFrameNamesItsDevice: true });

const NEW_AA =
  '$$0108AA863835028447675|5004C0001710250234134114057728A058AE112108305100.600000660304.7787N10134.8719E116458';

test('totem.decoder: a new-format report: km/h, status bits, cell with its signal, odometer in m; exact values', (t) => {
  const r = decode(text(NEW_AA), ctx('strict'));
  t.is(r.identity, '863835028447675');
  t.is(r.checksumError, undefined, 'its XOR verifies');
  t.is(Buffer.concat(r.replies).toString('latin1'), '$$0014AA116407');
  const m = r.messages[0];
  t.is(m.fixTime?.toISOString(), '2017-10-25T02:34:13.000Z');
  t.like(m.location, { valid: true, speedKmh: 51, courseDeg: 83, satellites: 11 });
  t.true(Math.abs(m.location!.latitudeDeg - (3 + 4.7787 / 60)) < 1e-9);
  t.true(Math.abs(m.location!.longitudeDeg - (101 + 34.8719 / 60)) < 1e-9);
  t.like(m.attributes, { status: 0x5004c000, ignition: true, charge: true, hdop: 0.6, odometer: 66000, sat: 11 });
  t.deepEqual(JSON.parse(String(m.attributes.network)), {
    cellTowers: [{ locationAreaCode: 0x28a0, cellId: 0x58ae, signalStrength: 21 }],
  });
});

test('totem.decoder: new-format alarm types and status bits map to the canonical alarms', (t) => {
  const withType = (type: string) => decode(text(`$$0108${type}${NEW_AA.slice(8)}`), ctx()).messages[0];
  t.deepEqual(withType('01').alarms, ['sos']);
  t.deepEqual(withType('10').alarms, ['powerCut']);
  t.deepEqual(withType('42').alarms, ['hardAcceleration']);
  t.deepEqual(withType('43').alarms, ['hardBraking']);
  t.deepEqual(withType('AB').alarms, []);
  const sos = decode(text(NEW_AA.replace('|5004C000', '|D004C000')), ctx()).messages[0];
  t.deepEqual(sos.alarms, ['sos'], 'the top status bit');
});

test('totem.decoder: old-format alarm codes map to alarms; AA is a plain report', (t) => {
  const frame =
    '$$B2359772032984289|AA$GPRMC,104446.000,A,5011.3944,N,01439.6637,E,0.00,,290212,,,A*7D|01.8|00.9|01.5|000000100000|20120229104446|14151221|00050000|046D085E|0000|0.0000|1170|29A7';
  const code = (c: string) => decode(text(frame.replace('|AA$', `|${c}$`)), ctx()).messages[0].alarms;
  t.deepEqual(code('AA'), []);
  t.deepEqual(code('01'), ['sos']);
  t.deepEqual(code('10'), ['lowBattery']);
  t.deepEqual(code('11'), ['overspeed']);
  t.deepEqual(code('30'), ['parking']);
  t.deepEqual(code('42'), ['geofenceExit']);
  t.deepEqual(code('43'), ['geofenceEnter']);
  const r = decode(text(frame), ctx('strict'));
  t.is(r.checksumError, undefined, 'its CRC-16/MODBUS verifies');
  t.like(r.messages[0].attributes, { pdop: 1.8, hdop: 0.9, vdop: 1.5, battery: 4.15, power: 1221, adc1: '00050000' });
  t.true(Math.abs(r.messages[0].location!.speedKmh!) < 1e-9);
});

test('totem.decoder: a frame with no readable layout still gets its ack and names its device', (t) => {
  const odd = decode(text('$$0065E6861172035926695|170912153257,-79.373853,43.765619,0,0,|4A'), ctx());
  t.is(odd.identity, '861172035926695');
  t.deepEqual(odd.messages, []);
  t.is(Buffer.concat(odd.replies).toString('latin1'), ack('$$0014AA,0,|'), 'the 4 characters before the XOR');
  const bb = decode(text('$$0025BB8620100372948613E'), ctx());
  t.deepEqual(bb.messages, []);
  t.is(Buffer.concat(bb.replies).toString('latin1'), ack('$$0014AA4861'));
  const old = decode(text('$$AE359772033395899|AA000000|1A2B'), ctx());
  t.is(old.identity, '359772033395899');
  t.is(Buffer.concat(old.replies).toString('latin1'), 'ACK OK\r\n');
});

test('totem.decoder: a wrong checksum is accepted with a warning, refused under strict', (t) => {
  const bad = NEW_AA.slice(0, -2) + '00';
  const r = decode(text(bad), ctx());
  t.truthy(r.checksumError);
  t.is(r.messages.length, 1);
  t.throws(() => decode(text(bad), ctx('strict')), { instanceOf: ProtocolError });
  t.throws(() => decode(text('hello'), ctx()), { instanceOf: ProtocolError });
});

test('totem.decoder: E5 (OBD) reads longitude before latitude, as E2 does; OBD values', (t) => {
  const m = decode(
    text(
      '$$0112E5864606045334223|201112223514,-68.923106,-22.455926,$Cloud,1738,621,730,12100,0,0,255,0,40,40,0,0,255,|13',
    ),
    ctx(),
  ).messages[0];
  t.is(m.fixTime?.toISOString(), '2020-11-12T22:35:14.000Z');
  t.like(m.location, { latitudeDeg: -22.455926, longitudeDeg: -68.923106, valid: true });
  t.like(m.attributes, {
    odometer: 1738,
    fuelUsed: 621,
    fuelConsumption: 730,
    power: 12.1,
    coolantTemp: 40,
    fuel: 255,
  });
});

test('totem.decoder: bytes before $$ (a CR LF left by the previous frame) are skipped with a warning', (t) => {
  const r = decode(text(`\r\n${NEW_AA}`), ctx());
  t.is(r.messages.length, 1);
  t.is(Buffer.concat(r.replies).toString('latin1'), '$$0014AA116407');
  t.deepEqual(r.warnings, ['skipped 2 bytes before $$']);
});
