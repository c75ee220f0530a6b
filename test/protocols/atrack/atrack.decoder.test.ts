import test from 'ava';
import { atrackProtocol } from '../../../protocols/atrack/atrack.protocol.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const decode = atrackProtocol.decode!;
const ctx = (options: Record<string, string> = {}, more: Partial<DecodeContext> = {}): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum: 'accept',
  session: {},
  options,
  ...more,
});
const hex = (s: string): Buffer => Buffer.from(s, 'hex');
const text = (s: string): Buffer => Buffer.from(s, 'latin1');

runVectors(atrackProtocol, { now: NOW });

// frames of Traccar's AtrackProtocolDecoderTest that are not among the shared vectors
const PLAIN =
  '40501e58003301e000014104d8f19682525ecd5d525ee344525ee35effc88815026ab4d70000020000104403de01000b0000000007d007d000';
const ZERO_FIX =
  '40503835003300070001441c3d8ed1c400000000000000c9000000c900000000000000000000020000000003de0100000000000007d007d000';
const LONG_DATE =
  '0203b494003c00eb00014104d8dd3a3e07de011b0b1f0307de011b0b1f0307de011b0b1f0300307f28030574d30000020000000600160100020000000007d007d000';
const OWN_FORM =
  '405025e30096eb730001452efaf6a7d6562fe4f8562fe4f7562fe52c02a006d902273f810064650000e0f5000a0100000000000007d007d000254349255341254d5625425625475125415400090083002a1a000001a8562fe4f8562fe4f7562fe52c02a006d902273f810064020000e0f5000a0100000000000007d007d000254349255341254d5625425625475125415400090083002a1a000001a8';
const FUEL =
  '4050b5ed004a2523000310c83713f8c05a88b43e5a88b43f5a88b43f021e0ad5fffdc0a800f3020003059100080000000000000007d007d046554c533a463d3230393120743d3137204e3d3039303100';

test('atrack.decoder: a keep-alive names its unit, is echoed as it came and carries nothing', (t) => {
  const r = decode(hex('fe0200014104d8f196820001'), ctx());
  t.is(r.identity, '352964052096642');
  t.deepEqual(r.messages, []);
  t.deepEqual(
    r.replies.map((b) => b.toString('hex')),
    ['fe0200014104d8f196820001'],
  );
});

test('atrack.decoder: a binary report is a position in degrees and km/h with its I/O, acked with unit id and sequence', (t) => {
  const r = decode(hex(PLAIN), ctx());
  t.is(r.identity, '352964052096642');
  t.deepEqual(
    r.replies.map((b) => b.toString('hex')),
    ['fe0200014104d8f1968201e0'],
  );
  t.is(r.messages.length, 1);
  const m = r.messages[0];
  t.is(m.fixTime?.toISOString(), '2013-10-16T17:31:09.000Z');
  t.deepEqual(m.location, { latitudeDeg: 40.547543, longitudeDeg: -3.635179, valid: true, courseDeg: 0, speedKmh: 11 });
  t.deepEqual(m.attributes, {
    type: 2,
    odometer: 416_400,
    hdop: 99,
    input: 1,
    output: 0,
    adc1: 0,
    temp1: 200,
    temp2: 200,
  });
});

test('atrack.decoder: a zero-filled record is the 1970 fix at 0/0 the reference reports', (t) => {
  const m = decode(hex(ZERO_FIX), ctx()).messages[0];
  t.is(m.fixTime?.toISOString(), '1970-01-01T00:00:00.000Z');
  t.like(m.location, { latitudeDeg: 0, longitudeDeg: 0, valid: true });
});

test('atrack.decoder: longDate=true reads the 7-byte dates', (t) => {
  const m = decode(hex(LONG_DATE), ctx({ longDate: 'true' })).messages[0];
  t.is(m.fixTime?.toISOString(), '2014-01-27T11:31:03.000Z');
  t.like(m.location, { latitudeDeg: 50.689235, longitudeDeg: 3.17828, speedKmh: 2 });
  t.like(m.attributes, { type: 2, odometer: 600, hdop: 2.2, input: 1 });
});

test('atrack.decoder: custom records naming their own form (%CI) read its fields, several records per report', (t) => {
  const r = decode(hex(OWN_FORM), ctx({ custom: 'true' }));
  t.is(r.messages.length, 2);
  for (const m of r.messages) {
    t.like(m.attributes, { sat: 9, power: 13.1, battery: 4.2, rssi: 26 });
    t.like(m.location, { satellites: 9, altitudeM: 424 });
  }
  t.deepEqual(
    r.messages.map((m) => m.attributes.type),
    [101, 2],
  );
  // without the setting the custom part is taken for the start of a record too short to read
  t.is(decode(hex(OWN_FORM), ctx()).messages.length, 3);
});

test('atrack.decoder: a FULS text message is a fuel reading, hex by default, decimal with decimalFuel', (t) => {
  t.is(decode(hex(FUEL), ctx()).messages[0].attributes.fuel, 230.5);
  t.is(decode(hex(FUEL), ctx({ decimalFuel: 'true' })).messages[0].attributes.fuel, 90.1);
});

test('atrack.decoder: alarmMap maps a report type to an alarm', (t) => {
  t.deepEqual(decode(hex(PLAIN), ctx({ alarmMap: '2=sos,3=powerCut' })).messages[0].alarms, ['sos']);
  t.deepEqual(decode(hex(PLAIN), ctx({ alarmMap: '2=notAnAlarm' })).messages[0].alarms, []);
});

test('atrack.decoder: a text report is acked with its length field as the u64 and its sequence', (t) => {
  const r = decode(
    text(
      '@P,1126,121,104547,358901048091554,20180412143513,20180412143514,20180413060000,16423389,48178700,108,2,6.5,9,0,0,0,0,0,2000,2000,\r\n',
    ),
    ctx(),
  );
  t.is(r.identity, '358901048091554');
  t.deepEqual(
    r.replies.map((b) => b.toString('hex')),
    ['fe0200000000000000799863'],
  );
  const m = r.messages[0];
  t.is(m.fixTime?.toISOString(), '2018-04-12T14:35:13.000Z');
  t.deepEqual(m.location, { latitudeDeg: 48.1787, longitudeDeg: 16.423389, valid: true, speedKmh: 0, courseDeg: 108 });
  t.like(m.attributes, { event: 2, odometer: 650, hdop: 0.9, driverUniqueId: '0', temp1: 2000 });
});

test('atrack.decoder: text custom fields by the configured form, a form alone turning custom on', (t) => {
  const frame = text(
    '@P,7E02,186,0,357766091026083,1558908265,1558908266,1558908266,-121900220,37407524,175,2,6,6,1,39,0,0,,2000,2000, ,3,40,142,12,JN8AZ1MU1BW066090,0,30,0,58,90,22,72,1187,0,1232,9,409,0,1,0,0,0,0,1\r\n',
  );
  const form = '%AT%BV%MV%SA%VN%PD%IA%MP%EL%ET%FC%FL%RP%ML%MF%TR%EH%DL%EG%HA%HB%HC%IP%MT';
  const m = decode(frame, ctx({ form })).messages[0];
  t.like(m.location, { altitudeM: 3, satellites: 12, speedKmh: 39 });
  t.like(m.attributes, {
    battery: 4,
    power: 14.2,
    vin: 'JN8AZ1MU1BW066090',
    intakeTemp: 30,
    engineLoad: 58,
    coolantTemp: 90,
    fuelConsumption: 22,
    fuel: 72,
    rpm: 1187,
    throttle: 9,
    hours: 40.9 * 3_600_000,
    motion: true,
  });
  t.false('vin' in decode(frame, ctx({ form, custom: 'false' })).messages[0].attributes);
});

test('atrack.decoder: a text cell (CN, CE, LC, GQ) is the network; a cell without LAC gives its signal as rssi', (t) => {
  const m = decode(
    text(
      '@P,6254,235,989,356961075931165,1534381563,1534381564,1534381564,-88429188,44271225,70,2,200563,8,1,0,0,0,,2000,2000,,%CI%CE%CN%GQ%GS%LC,7888593,310260,18,9,14953',
    ),
    ctx({ custom: 'true' }),
  ).messages[0];
  t.deepEqual(JSON.parse(String(m.attributes.network)), {
    cellTowers: [
      { locationAreaCode: 14953, cellId: 7888593, mobileCountryCode: 310, mobileNetworkCode: 260, signalStrength: 18 },
    ],
  });
  const noLac = decode(
    text(
      '@P,0EBB,687,1917,357298070426498,1534718280,1534718279,1534739774,-88643875,44210148,270,2,57128,6,1,130,0,0,,2000,2000,,%CI%GQ%GS%CN%CE%MV%SA,5,10,310260,7888593,137,16\r\n',
    ),
    ctx({ custom: 'true' }),
  ).messages[0];
  t.false('network' in noLac.attributes);
  t.is(noLac.attributes.rssi, 5);
  t.is(noLac.attributes.power, 13.7);
});

test('atrack.decoder: beacons: mode:mask:hex tags, and frameMask=1 tag lists with temperatures', (t) => {
  const beacon = decode(
    text(
      '@P,7A66,153,9022,863003048505515,20210207000103,20210207000103,20210207000103,103939276,1348903,97,2,5628,8,0,0,0,0,,2000,2000,\u001a,%CI%BC,3:224:F128833445E6002C09C6\r\n',
    ),
    ctx({ custom: 'true' }),
  ).messages[0];
  t.like(beacon.attributes, { tag1Id: 'f128833445e6', tag1Humidity: 44, tag1Temp: 2502 });
  const tags = decode(
    text(
      '@P,CB9D,687,25677,866069066725472,1738889283,1743733895,1743734368,153008876,-27456623,120,2,1512,990,0,53,0,0,,2000,2000,\u001a,0DE0CD9F8F1F40FE092D0BA0C5F0\r\n1738889283,1743733915,1743734368,153008876,-27456623,120,2,1512,990,0,53,0,0,,2000,2000,\u001a,\r\n',
    ),
    ctx({ form: '%BC', frameMask: '1' }),
  );
  t.is(tags.messages.length, 2);
  t.is(tags.messages[0].attributes.tag1Temp, 23.49);
  t.false('tag1Temp' in tags.messages[1].attributes);
});

test('atrack.decoder: $INFO names the device with model, firmware, power and signal; it is a command answer', (t) => {
  const info =
    '$INFO=358683066267395,AX7,Rev.0.61 Build.1624,358683066267395,466924131626767,89886920041316267670,144,0,9,1,12,1,0';
  const r = decode(text(`${info}\r\n`), ctx());
  t.is(r.identity, '358683066267395');
  t.deepEqual(r.messages[0].attributes, {
    model: 'AX7',
    versionFw: 'Rev.0.61 Build.1624',
    power: 14.4,
    battery: 0,
    sat: 9,
    rssi: 12,
  });
  t.deepEqual(r.commandResults, [{ text: info }]);
  t.deepEqual(r.replies, []);
});

test('atrack.decoder: $OK and $ERROR answer for the device the connection knows, and for none without one', (t) => {
  const known = decode(text('$ERROR=101\r\n'), ctx({}, { deviceId: '352964052096642' }));
  t.deepEqual(known.messages[0].attributes, { result: '$ERROR=101' });
  t.deepEqual(known.commandResults, [{ text: '$ERROR=101' }]);
  const unknown = decode(text('$OK\r\n'), ctx());
  t.deepEqual(unknown.messages, []);
  t.is(unknown.commandResults, undefined);
});

test('atrack.decoder: @R photo chunks are acked and not stored; the last one is noted', (t) => {
  const session = {};
  const chunk = (index: number, count: number) =>
    hex(
      `4052000000150001000147027fe5d7425f642e56${index.toString(16).padStart(2, '0')}${count.toString(16).padStart(2, '0')}0003ffd8ff`,
    );
  const first = decode(chunk(0, 2), ctx({}, { session }));
  t.deepEqual(first.messages, []);
  t.deepEqual(
    first.replies.map((b) => b.toString('hex')),
    ['fe02000147027fe5d7420001'],
  );
  t.is(first.warnings, undefined);
  const last = decode(chunk(1, 2), ctx({}, { session }));
  t.deepEqual(last.messages, []);
  t.regex(last.warnings?.[0] ?? '', /photo .* complete \(2 chunks, 6 bytes\), not stored/);
});

test('atrack.decoder: a UDP datagram decodes as a TCP frame does', (t) => {
  const r = atrackProtocol.decodeDatagram!(hex(PLAIN), ctx({}, { transport: 'udp' }));
  t.is(r.messages.length, 1);
  t.is(r.replies[0].toString('hex'), 'fe0200014104d8f1968201e0');
});

test('atrack.decoder: frames that cannot be read throw ProtocolError', (t) => {
  t.throws(() => decode(hex(PLAIN.slice(0, 24)), ctx()), { instanceOf: ProtocolError });
  // as in the reference, less than a record's 40 bytes after the header is no record: acked, nothing stored
  t.deepEqual(decode(hex(PLAIN.slice(0, 60)), ctx()).messages, []);
  t.throws(() => decode(hex('4050'), ctx()), { instanceOf: ProtocolError });
  t.throws(() => decode(text('@P,1126,121\r\n'), ctx()), { instanceOf: ProtocolError });
  t.throws(() => decode(text('@P,1126,x,1,358901048091554,1,1,1\r\n'), ctx()), { instanceOf: ProtocolError });
  t.throws(() => decode(hex(OWN_FORM.slice(0, 300)), ctx({ custom: 'true' })), { instanceOf: ProtocolError });
});

test('atrack.decoder: a text record whose custom value is no number is left out with a warning; the report is acked', (t) => {
  const r = decode(
    text(
      '@P,CA4B,122,1,358683064932578,1533633976,1533633975,1533633975,121562641,25082649,72,0,1638,15,0,0,1,0,,2000,2000,,%CI%MV%BV,1x3,0\r\n',
    ),
    ctx({ custom: 'true' }),
  );
  t.deepEqual(r.messages, []);
  t.is(r.warnings?.length, 1);
  t.is(r.replies[0].toString('hex'), 'fe02000000000000007a0001');
});
