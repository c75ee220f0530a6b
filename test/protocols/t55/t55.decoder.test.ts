import test from 'ava';
import { t55Protocol } from '../../../protocols/t55/t55.protocol.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const decode = t55Protocol.decode!;
const text = (s: string): Buffer => Buffer.from(s, 'latin1');

runVectors(t55Protocol, { now: NOW });

const ctx = (o: Partial<DecodeContext> = {}): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum: 'accept',
  session: {},
  ...o,
});
const RMC = '$GPRMC,094907.000,A,6000.5332,N,03020.5192,E,1.17,60.26,091111,,*33';

test('t55.decoder: every identification line names its device and reports nothing', (t) => {
  for (const [line, id] of [
    ['$PGID,359853000144328*0F', '359853000144328'],
    ['$DEVID,0x0103846677F21422*41', '0x0103846677F21422'],
    ['$PCPTI,CradlePoint Test,184453,184453.0,6F*57', 'CradlePoint Test'],
    ['IMEI 351467108700000', '351467108700000'],
    ['$IMEI=355797031609284', '355797031609284'],
    ['$PSIWMDID,6Q5161694402B133*2F', '6Q5161694402B133'],
    ['$CONNECT,350030950116536,NETWORK,"Ben NL",RO,001,LAC,B02C,CID,521B,V,120.69', '350030950116536'],
    ['$GPFID,ID123456ABC', 'ID123456ABC'],
    ['086415031C20', '086415031C20'],
    ['358244017671308\r\n', '358244017671308'],
  ]) {
    const session: Record<string, unknown> = {};
    const r = decode(text(line), ctx({ session }));
    t.is(r.identity, id, line);
    t.deepEqual(r.messages, [], line);
    t.deepEqual(r.replies, [], line);
    t.is(session['t55.identity'], id, `${line}: the session keeps the identity`);
  }
});

test('t55.decoder: bare NMEA after the identification belongs to the device the session names', (t) => {
  const session: Record<string, unknown> = {};
  decode(text('$PGID,359853000144328*0F'), ctx({ session }));
  const r = decode(text(RMC), ctx({ session }));
  t.is(r.identity, undefined, 'the line itself names no device');
  const m = r.messages[0];
  t.is(m.fixTime!.toISOString(), '2011-11-09T09:49:07.000Z');
  t.is(m.location!.latitudeDeg, 60 + 0.5332 / 60);
  t.is(m.location!.longitudeDeg, 30 + 20.5192 / 60);
  t.is(m.location!.speedKmh, 1.17 * 1.852);
  t.is(m.location!.courseDeg, 60.26);
  t.true(m.location!.valid);
  const gga = decode(
    text('$GPGGA,082350.000,5355.0314,S,01044.1271,W,1,10,0.7,-46.0,M,0.0,M,0.0,0000'),
    ctx({ session }),
  );
  t.like(gga.messages[0].location, { valid: true, altitudeM: -46, satellites: 10 });
  t.true(gga.messages[0].location!.latitudeDeg < 0 && gga.messages[0].location!.longitudeDeg < 0);
  t.is(gga.messages[0].fixTime!.toISOString(), '2026-01-02T08:23:50.000Z', 'a time of day: the nearest such instant');
  t.like(gga.messages[0].attributes, { sat: 10, hdop: 0.7 });
  const gll = decode(text('$GNGLL,4650.5156500,N,01246.1059604,E,164414.90,V,A*77'), ctx({ session }));
  t.is(gll.messages[0].fixTime!.toISOString(), '2026-01-01T16:44:14.000Z');
  t.false(gll.messages[0].location!.valid);
});

test('t55.decoder: without an identification, GGA/GLL/RMA/TRCCR/GPIOP report nothing', (t) => {
  for (const line of [
    '$GPGGA,000000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47',
    '$GNGLL,4650.5156500,N,01246.1059604,E,164414.90,A,A*77',
    '$GPRMA,V,0000.00,S,00000.00,E,,,00.0,000.,11.,E*7',
    '$TRCCR,20140111000000.000,A,60.000000,60.000000,0.00,0.00,0.00,50,*3a',
    '$GPIOP,01000000,00000000,0.00,0.00,0.00,0.00,4.69,4.24*49',
  ]) {
    t.deepEqual(decode(text(line), ctx()).messages, [], line);
  }
});

test('t55.decoder: an id before the $ names the device, in each of its three forms', (t) => {
  for (const [line, id] of [
    ['660420156A0066AA$GPRMC,122806.0,A,0119.212178,N,10355.000942,E,0.0,,230119,0.0,E,A*27', '660420156A0066AA'],
    ['990000561287964,$GPRMC,213516.0,A,4337.216791,N,11611.995877,W,0.0,335.4,181214,,,A * 72', '990000561287964'],
    ['4711/022789000688081/$GPRMC,133343,A,5308.56325,N,1029.12850,E,0.000000,0.000000,290316,,*2A', '022789000688081'],
    ['355096030432529$GPGGA,000000.00,3136.599,S,5213.981,W,1,7,2.13,250.00,M,-16.384,M,0.0,1', '355096030432529'],
  ]) {
    const r = decode(text(line), ctx());
    t.is(r.identity, id, line);
    t.is(r.messages.length, 1, line);
  }
});

test('t55.decoder: an RMC with the tracker fields after its checksum names the device and carries I/O', (t) => {
  const r = decode(
    text('$GPRMC,073446.000,A,1255.5125,N,07738.2948,E,0.00,0.53,080316,D*71,11,865733027593268,1,090,086,123,456'),
    ctx(),
  );
  t.is(r.identity, '865733027593268');
  t.deepEqual(r.messages[0].attributes, { sat: 11, ignition: true, fuel: 90, battery: 86, io1: '123', io2: '456' });
  t.is(r.messages[0].location!.satellites, 11);
});

test('t55.decoder: Maxon: an RMC before identification is held and released by $GPFID, also when decoded again', (t) => {
  const session: Record<string, unknown> = {};
  const held = decode(text('$GPRMC,012006,A,4828.10,N,1353.52,E,0.00,0.00,180915,020.3,E*42'), ctx({ session }));
  t.deepEqual(held.messages, []);
  t.truthy(session['t55.pending']);
  const fid = text('$GPFID,ID123456ABC');
  const first = decode(fid, ctx({ session }));
  t.is(first.identity, 'ID123456ABC');
  t.is(first.messages.length, 1);
  t.is(first.messages[0].fixTime!.toISOString(), '2015-09-18T01:20:06.000Z');
  t.deepEqual(decode(fid, ctx({ session })), first, 'the same line decoded again gives the same fix');
  decode(text('$GPGGA,000000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47'), ctx({ session }));
  t.deepEqual(decode(fid, ctx({ session })).messages, [], 'a later $GPFID releases nothing more');
});

test('t55.decoder: with the ack setting an RMC of a known device is answered OK1 over TCP, never over UDP', (t) => {
  const options = { ack: 'true' };
  const tcp = decode(text(RMC), ctx({ deviceId: '123', options }));
  t.is(Buffer.concat(tcp.replies).toString('latin1'), 'OK1\r\n');
  t.deepEqual(decode(text(RMC), ctx({ deviceId: '123' })).replies, [], 'off by default');
  t.deepEqual(decode(text(RMC), ctx({ deviceId: '123', options: { ack: 'false' } })).replies, []);
  t.deepEqual(t55Protocol.decodeDatagram!(text(RMC), ctx({ deviceId: '123', options, transport: 'udp' })).replies, []);
  t.deepEqual(decode(text(RMC), ctx({ options })).replies, [], 'no answer before the device is known');
  const unread = decode(text('$GPRMC,garbage'), ctx({ deviceId: '123', options }));
  t.is(Buffer.concat(unread.replies).toString('latin1'), 'OK1\r\n', 'an RMC that does not read is answered too');
  t.deepEqual(unread.messages, []);
  t.deepEqual(
    decode(text('$GPGGA,000000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47'), ctx({ deviceId: '1', options }))
      .replies,
    [],
  );
});

test('t55.decoder: vendor sentences: PUBX, TRCCR, GPIOP, GPTXT, QZE, WMCS', (t) => {
  const known = () => ctx({ deviceId: '1' });
  const pubx = decode(
    text(
      '$PUBX,00,130209.00,3650.51159,N,01346.10602,E,785.947,D3,4.1,5.2,0.163,87.43,-0.054,7.0,0.88,1.21,0.88,24,01012,0*6D',
    ),
    ctx(),
  );
  t.is(pubx.identity, '01012');
  t.like(pubx.messages[0].location, {
    valid: true,
    altitudeM: 785.947,
    accuracyM: 4.1,
    speedKmh: 0.163,
    courseDeg: 87.43,
  });
  t.like(pubx.messages[0].attributes, { index: 0, hdop: 0.88, vdop: 1.21, sat: 24 });
  const trccr = decode(text('$TRCCR,20140101001122.333,V,60.0,-100.0,1.1,2.2,3.3,4.4,*00'), known());
  t.is(trccr.messages[0].fixTime!.toISOString(), '2014-01-01T00:11:22.000Z');
  t.like(trccr.messages[0].location, {
    latitudeDeg: 60,
    longitudeDeg: -100,
    valid: false,
    courseDeg: 2.2,
    altitudeM: 3.3,
  });
  t.is(trccr.messages[0].attributes.battery, 4.4);
  const iop = decode(text('$GPIOP,01000000,00000000,0.00,0.00,0.00,0.00,4.69,4.24*49'), known());
  t.deepEqual(iop.messages[0], { alarms: [], attributes: { power: 4.69, battery: 4.24 } });
  const txt = decode(text('$GPTXT,NET,1003,A1,-53,232 01*77'), ctx());
  t.is(txt.identity, '1003');
  t.deepEqual(txt.messages[0].attributes, { operator: 'A1', rssi: -53, mcc: 232, mnc: 1 });
  const qze = decode(text('QZE,868994033976700,35,28062020,113553,22.13673,114.57263,40,22,A,1'), ctx());
  t.is(qze.identity, '868994033976700');
  t.is(qze.messages[0].fixTime!.toISOString(), '2020-06-28T11:35:53.000Z');
  t.like(qze.messages[0].location, { speedKmh: 40, courseDeg: 22, valid: true });
  t.deepEqual(qze.messages[0].attributes, { event: 35, ignition: true });
  const wmcs = decode(
    text(
      '$ID,355826017981316,666,370,ALARM,0x00004000,IOP,M,48,GPSET,V,D,160517,T,161628,S,3:2,La,51.64175,N,Lo,2.21816,W,H,21.47,V,12.5,DD,77',
    ),
    ctx(),
  );
  t.is(wmcs.identity, '355826017981316');
  t.is(wmcs.messages[0].fixTime!.toISOString(), '2017-05-16T16:16:28.000Z');
  t.deepEqual(wmcs.messages[0].location, {
    latitudeDeg: 51.64175,
    longitudeDeg: -2.21816,
    valid: false,
    courseDeg: 21.47,
    speedKmh: 12.5,
    satellites: 2,
  });
  t.deepEqual(wmcs.messages[0].attributes, { satVisible: 3, sat: 2, totalDistance: 77 });
  const alarm = decode(text('$ID,355826017981316,ALARM,0x00004000,GPSEX,A,La,1.5,N,Lo,2.5,E'), ctx());
  t.is(alarm.messages[0].attributes.alarm, '0x00004000', 'an ALARM right after the IMEI is kept raw');
});

test('t55.decoder: a date more than a day ahead (week rollover) keeps the fix but not its time', (t) => {
  const r = decode(text('$GPRMC,161223.000,A,2517.0545,S,05739.1788,W,0.0,0.0,011196,,,A*61'), ctx({ deviceId: '1' }));
  t.is(r.messages[0].fixTime, undefined);
  t.truthy(r.messages[0].location);
  t.regex(r.warnings?.[0] ?? '', /future/);
});

test('t55.decoder: malformed sentences throw ProtocolError; unknown ones report nothing', (t) => {
  for (const bad of [
    '$GPRMC,094907.000,A,9500.5332,N,03020.5192,E,1.17,60.26,091111,,*33',
    '$GPRMC,094907.000,A,6000.5332,N,03020.5192,E,1.17,60.26,321311,,*33',
    '$GPGGA,250000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47',
    'QZE,868994033976700,35,28132020,113553,22.13673,114.57263,0,22,A,0',
    '$PUBX,00,garbage*00',
    '$ID,1,GPSEX,A,La,95.0,N,Lo,2.5,E',
    '$PGID*0',
  ]) {
    t.throws(() => decode(text(bad), ctx({ deviceId: '1' })), { instanceOf: ProtocolError }, bad);
  }
  t.deepEqual(decode(text('$GPGSV,3,1,11,03,03,111,00*74'), ctx({ deviceId: '1' })).messages, []);
  t.deepEqual(decode(text(''), ctx()).messages, []);
});
