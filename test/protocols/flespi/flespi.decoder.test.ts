import test from 'ava';
import { flespiProtocol } from '../../../protocols/flespi/flespi.protocol.js';
import type { DecodeContext, HttpDecodeResult } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const ctx: DecodeContext = { now: NOW, transport: 'http', checksum: 'accept', session: {} };
const post = (body: unknown): HttpDecodeResult =>
  flespiProtocol.decodeHttp!(
    {
      method: 'POST',
      url: '/',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
    },
    ctx,
  );

runVectors(flespiProtocol, { now: NOW, everyFrameNamesItsDevice: true });

test('flespi.decoder: messages of several devices are grouped by ident in the order each first appears', (t) => {
  const r = post([
    { ident: 'b', timestamp: 1767323000, 'position.latitude': 1, 'position.longitude': 2 },
    { ident: 'a', timestamp: 1767323001, 'position.latitude': 3, 'position.longitude': 4 },
    { timestamp: 1767323002 },
    { ident: 'b', timestamp: 1767323003, 'position.latitude': 5, 'position.longitude': 6 },
  ]);
  t.is(r.status, 200);
  t.deepEqual(
    r.devices?.map((g) => [g.identity, g.messages.map((m) => m.location?.latitudeDeg)]),
    [
      ['b', [1, 5]],
      ['a', [3]],
    ],
  );
  t.is(r.identity, 'b');
  t.is(r.messages.length, 3);
  t.deepEqual(r.warnings, ['1 message(s) without an ident string skipped']);
});

test('flespi.decoder: parameters in the units and keys the reference uses; unknown ones keep their key', (t) => {
  const [m] = post([
    {
      ident: '123',
      timestamp: 1767323045.987,
      'position.latitude': 59.5,
      'position.longitude': 18.25,
      'position.speed': 42.5,
      'position.direction': 90,
      'position.altitude': -3,
      'position.satellites': 7.9,
      'position.valid': false,
      'position.hdop': 0.9,
      'position.pdop': 1.4,
      din: 3,
      dout: 1,
      'report.reason': 12,
      'gps.vehicle.mileage': 1234.5,
      'external.powersource.voltage': 12.6,
      'external.powersource.status': true,
      'battery.voltage': 4.1,
      'battery.level': 88,
      'can.fuel.level': 40,
      'engine.rpm': 900,
      'can.engine.temperature#2': 85,
      'can.engine.temperature': 80,
      'engine.ignition.status': true,
      'movement.status': false,
      'device.temperature': 31,
      'ibutton.code': 'AB12',
      'vehicle.vin': 'VIN1',
      'custom.wln_accel_max': 0.3,
      'sensor.value#1': 5,
      'custom.text': 'x',
      'custom.object': { a: 1 },
    },
  ]).messages;
  t.is(m.fixTime?.toISOString(), '2026-01-02T03:04:05.000Z', 'the fraction dropped');
  t.deepEqual(m.location, {
    latitudeDeg: 59.5,
    longitudeDeg: 18.25,
    valid: false,
    speedKmh: 42.5,
    courseDeg: 90,
    altitudeM: -3,
  });
  t.deepEqual(m.attributes, {
    ident: '123',
    sat: 7,
    hdop: 0.9,
    pdop: 1.4,
    input: 3,
    output: 1,
    event: 12,
    odometer: 1234.5,
    power: 12.6,
    charge: true,
    battery: 4.1,
    batteryLevel: 88,
    fuel: 40,
    rpm: 900,
    temp2: 85,
    temp0: 80,
    ignition: true,
    motion: false,
    deviceTemp: 31,
    driverUniqueId: 'AB12',
    vin: 'VIN1',
    maxAcceleration: 0.3,
    'sensor.value#1': 5,
    'custom.text': 'x',
  });
});

test('flespi.decoder: event parameters raise alarms; a message at 0, 0 has no location', (t) => {
  const events = {
    'alarm.event.trigger': 'general',
    'towing.event.trigger': 'tow',
    'geofence.event.enter': 'geofenceEnter',
    'geofence.event.exit': 'geofenceExit',
    'shock.event.trigger': 'vibration',
    'overspeeding.event.trigger': 'overspeed',
    'harsh.acceleration.event.trigger': 'hardAcceleration',
    'harsh.braking.event.trigger': 'hardBraking',
    'harsh.cornering.event.trigger': 'hardCornering',
    'gnss.antenna.cut.status': 'gpsAntennaCut',
    'gsm.jamming.event.trigger': 'jamming',
    'hood.open.status': 'bonnet',
  };
  const on = Object.fromEntries(Object.keys(events).map((k) => [k, true]));
  const [m] = post([{ ident: '1', ...on, 'towing.alarm.status': true }]).messages;
  t.deepEqual(m.alarms, Object.values(events));
  t.is(m.location, undefined);
  const [off] = post([{ ident: '1', ...Object.fromEntries(Object.keys(events).map((k) => [k, false])) }]).messages;
  t.deepEqual(off.alarms, []);
  t.deepEqual(off.attributes, { ident: '1' });
});

test('flespi.decoder: an ISO 8601 timestamp is read as the docs allow it', (t) => {
  t.is(
    post([{ ident: '1', timestamp: '2026-01-02T03:04:05' }]).messages[0].fixTime?.toISOString(),
    '2026-01-02T03:04:05.000Z',
  );
});

test('flespi.decoder: a body that is no JSON array is a 400; an empty array a 200 with nothing', (t) => {
  t.is(post('{"ident":"1"}').status, 400);
  t.is(post('[{').status, 400);
  t.is(post('x'.repeat(2 * 1024 * 1024)).status, 400);
  const empty = post([]);
  t.is(empty.status, 200);
  t.deepEqual(empty.devices, []);
  t.is(empty.identity, undefined);
});
