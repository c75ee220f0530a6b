import test from 'ava';
import { startekProtocol } from '../../../protocols/startek/startek.protocol.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const decode = startekProtocol.decode!;
const ctx = (checksum: 'accept' | 'strict' = 'accept'): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum,
  session: {},
});

/** `&&<index><length>,<imei>,<code>,<content><checksum>` CR LF with the right length and checksum */
function frame(imei: string, code: string, content: string, index = 'a'): Buffer {
  const counted = `,${imei},${code},${content}`;
  const head = `&&${index}${counted.length}${counted}`;
  let sum = 0;
  for (const b of Buffer.from(head, 'latin1')) sum = (sum + b) & 0xff;
  return Buffer.from(`${head}${sum.toString(16).toUpperCase().padStart(2, '0')}\r\n`, 'latin1');
}

runVectors(startekProtocol, { now: NOW, everyFrameNamesItsDevice: true });

const REPORT =
  '1,,260301100000,A,-22.994986,72.499711,15,0.9,52,222,55,121135784,404|98|147B|0000376A,24,0000001F,06,01,052E|01A3|01C8|0000';

test('startek.decoder: a 000 report is a position in degrees and km/h, UTC, with cell, I/O and voltages', (t) => {
  const r = decode(frame('860294046453690', '000', REPORT), ctx());
  t.is(r.identity, '860294046453690');
  t.deepEqual(r.replies, [], 'iStartek devices get no acknowledgement');
  t.is(r.checksumError, undefined);
  const m = r.messages[0];
  t.is(m.fixTime!.toISOString(), '2026-03-01T10:00:00.000Z');
  t.deepEqual(m.location, {
    latitudeDeg: -22.994986,
    longitudeDeg: 72.499711,
    valid: true,
    speedKmh: 52,
    courseDeg: 222,
    altitudeM: 55,
    satellites: 15,
  });
  t.deepEqual(m.alarms, ['sos'], 'event 1 is SOS');
  t.like(m.attributes, {
    event: 1,
    sat: 15,
    hdop: 0.9,
    odometer: 121135784,
    status: 0x1f,
    input: 6,
    ignition: true,
    door: true,
    output: 1,
    power: 13.26,
    battery: 4.19,
    adc2: 4.56,
    adc3: 0,
  });
  t.deepEqual(JSON.parse(String(m.attributes.network)), {
    cellTowers: [
      { mobileCountryCode: 404, mobileNetworkCode: 98, locationAreaCode: 0x147b, cellId: 0x376a, signalStrength: 24 },
    ],
  });
});

test('startek.decoder: event codes map to alarms as the reference maps them; event 53 names the driver', (t) => {
  const alarms = (event: number) =>
    decode(frame('860294046453690', '000', REPORT.replace(/^1,/, `${event},`)), ctx()).messages[0].alarms;
  for (const [event, alarm] of [
    [1, 'sos'],
    [5, 'door'],
    [6, 'door'],
    [17, 'lowPower'],
    [18, 'powerCut'],
    [19, 'powerRestored'],
    [39, 'hardAcceleration'],
    [40, 'hardBraking'],
    [41, 'hardCornering'],
  ] as const) {
    t.deepEqual(alarms(event), [alarm], `event ${event}`);
  }
  t.deepEqual(alarms(0), []);
  t.deepEqual(alarms(36), []);
  const driver = decode(frame('860294046453690', '000', REPORT.replace(/^1,,/, '53,8F5300,')), ctx()).messages[0];
  t.deepEqual(driver.alarms, []);
  t.is(driver.attributes.driverUniqueId, '8F5300');
});

test('startek.decoder: fuel and temperature sensors, OBD fields, driver id and engine hours', (t) => {
  const sensors = decode(frame('1', '000', `${REPORT},1,0104B0,01013D|028135`), ctx()).messages[0].attributes;
  t.like(sensors, { fuel1: 120, temp1: 31.7, temp2: -30.9 });
  const obd = decode(frame('1', '000', `${REPORT},1,,,686|33||44|99|14|124|11|40%`), ctx()).messages[0].attributes;
  t.like(obd, {
    rpm: 686,
    engineLoad: 33,
    airPressure: 44,
    airTemp: 59,
    throttle: 14,
    coolantTemp: 84,
    fuelConsumption: 1.1,
    fuel: 40,
  });
  t.false('airFlow' in obd, 'an empty OBD field is left out');
  const tail = decode(frame('1', '000', `${REPORT},129,,,,ABCDEFGHIJ0123456789XY,9490`), ctx()).messages[0].attributes;
  t.like(tail, { driverUniqueId: 'ABCDEFGHIJ0123456789XY', hours: 9490000 });
});

test('startek.decoder: a 710 block becomes engine attributes without a fix', (t) => {
  const t1 = 'T1,10.0,1500.5,2.0,55.5,0,0,0,0,1.0,90,0.0,35,F0,27.9,0.0,88.5,0,42.0,0,0.0,0,0,310,0,0,1,0,12.5,0';
  const t2 = 'T2,1234.5,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,4321,0,7.5,0,800.25,0';
  const r = decode(frame('865491061145970', '710', `${t1}\r\n${t2}\r\nT5,0,*\r\n`), ctx());
  const m = r.messages[0];
  t.is(m.location, undefined);
  t.deepEqual(m.attributes, {
    rpm: 1500.5,
    fuel: 55.5,
    coolantTemp: 90,
    torque: 35,
    power: 27.9,
    oilTemp: 88.5,
    throttle: 42,
    oilPressure: 310,
    ignition: true,
    catalystLevel: 12.5,
    odometer: 1234500,
    hours: 4321,
    fuelConsumption: 7.5,
    fuelUsed: 800.25,
  });
});

test('startek.decoder: another command code is the answer to a command', (t) => {
  const r = decode(Buffer.from('&&:23,860262050015424,129,OKA2\r\n', 'latin1'), ctx());
  t.is(r.identity, '860262050015424');
  t.deepEqual(r.commandResults, [{ text: 'OK' }]);
  t.deepEqual(r.messages, [{ alarms: [], attributes: { type: '129', result: 'OK' } }]);
  t.is(decode(frame('1', '000', REPORT), ctx()).commandResults, undefined);
});

test('startek.decoder: a wrong checksum is accepted with a warning, or refused when strict', (t) => {
  const good = frame('860294046453690', '000', REPORT);
  const bad = Buffer.from(good);
  bad[bad.length - 3] = bad[bad.length - 3] === 0x30 ? 0x31 : 0x30;
  const r = decode(bad, ctx());
  t.regex(r.checksumError ?? '', /checksum/);
  t.is(r.messages.length, 1);
  const e = t.throws(() => decode(bad, ctx('strict')), { instanceOf: ProtocolError });
  t.is(e?.identity, '860294046453690');
  t.notThrows(() => decode(good, ctx('strict')));
});

test('startek.decoder: malformed frames throw ProtocolError', (t) => {
  for (const bad of [
    Buffer.from('&&a10,123,000,x\r\n'),
    Buffer.from('garbage\r\n'),
    frame('1', '000', REPORT.replace('-22.994986', '-92.994986')),
    frame('1', '000', REPORT.replace('260301', '261301')),
    frame('1', '000', 'not a report'),
    frame('1', '000', `${REPORT},1,XX`),
    frame('1', '710', 'T1,1,2,3'),
    frame('1', '710', 'T2,x.y'),
  ]) {
    t.throws(() => decode(bad, ctx()), { instanceOf: ProtocolError }, bad.toString('latin1'));
  }
});
