import test from 'ava';
import { osmandProtocol } from '../../../protocols/osmand/osmand.protocol.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { vectorTime } from '../../helpers/vectors.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date('2026-07-01T00:00:00Z');
const ctx = (): DecodeContext => ({ now: NOW, transport: 'http', checksum: 'accept', session: {} });

const get = (url: string) =>
  osmandProtocol.decodeHttp!({ method: 'GET', url, headers: {}, body: Buffer.alloc(0) }, ctx());

// every OsmAnd request carries its device's id
runVectors(osmandProtocol, { now: NOW, everyFrameNamesItsDevice: true });

test('osmand.decoder: a query names the device, and its speed is knots by default', (t) => {
  const result = get(
    '/?id=123456&timestamp=1377177267&lat=60.0&lon=30.0&speed=10&bearing=90&altitude=12&accuracy=5&batt=80',
  );
  t.is(result.status, 200);
  t.is(result.identity, '123456');
  const m = result.messages[0];
  t.is(vectorTime(m.fixTime!), '2013-08-22 13:14:27.000');
  t.deepEqual(m.location, {
    latitudeDeg: 60,
    longitudeDeg: 30,
    valid: true,
    speedKmh: 18.52,
    courseDeg: 90,
    altitudeM: 12,
    accuracyM: 5,
  });
  t.is(m.attributes.batteryLevel, 80);
});

test('osmand.decoder: the query speed is always knots, whatever the request', (t) => {
  t.true(Math.abs(get('/?id=1&lat=1&lon=2&speed=36').messages[0].location!.speedKmh! - 36 * 1.852) < 1e-9);
  t.true(Math.abs(get('/?id=1&lat=1&lon=2&speed=10').messages[0].location!.speedKmh! - 18.52) < 1e-9);
});

test('osmand.decoder: a missing id or unreadable coordinates answer 400 with no message', (t) => {
  for (const url of [
    '/?lat=1&lon=2',
    '/?id=&lat=1&lon=2',
    '/?id=1&lat=abc&lon=2',
    '/?id=1&location=1',
    '/?id=1&lat=91&lon=2',
    '/',
  ]) {
    const result = get(url);
    t.is(result.status, 400, url);
    t.deepEqual(result.messages, [], url);
  }
});

test('osmand.decoder: without coordinates the message keeps its attributes and has no location', (t) => {
  const result = get('/?id=123456&timestamp=1377177267&cell=257,02,16,2224&wifi=00-14-22-01-23-45,-80');
  t.is(result.status, 200);
  t.is(result.messages[0].location, undefined);
  const network = JSON.parse(String(result.messages[0].attributes.network));
  t.deepEqual(network.cellTowers[0], {
    mobileCountryCode: 257,
    mobileNetworkCode: 2,
    locationAreaCode: 16,
    cellId: 2224,
  });
  t.is(network.wifiAccessPoints[0].macAddress, '00:14:22:01:23:45');
});

test('osmand.decoder: timestamps in seconds, milliseconds, ISO and yyyy-MM-dd HH:mm:ss (UTC) are read', (t) => {
  const time = (v: string): string =>
    vectorTime(get(`/?id=1&lat=1&lon=2&timestamp=${encodeURIComponent(v)}`).messages[0].fixTime!);
  t.is(time('1442068686579'), '2015-09-12 14:38:06.579');
  t.is(time('2014-06-04 09:10:11'), '2014-06-04 09:10:11.000');
  t.is(time('2025-06-15T13:45:12.862Z'), '2025-06-15 13:45:12.862');
  t.is(time('2025-06-15T15:45:12+02:00'), '2025-06-15 13:45:12.000');
  t.is(time('040614091011'), '2014-06-04 09:10:11.000');
});

test('osmand.decoder: other parameters become typed attributes; LC codes name alarms', (t) => {
  const m = get('/?id=1&lat=1&lon=2&ignition=true&rpm=933&note=hello&LC=5E&odometer=1.5&__proto__=x').messages[0];
  t.is(m.attributes.ignition, true);
  t.is(m.attributes.rpm, 933);
  t.is(m.attributes.note, 'hello');
  t.is(m.attributes.odometer, 1500);
  t.deepEqual(m.alarms, ['powerCut']);
  t.is(Object.getPrototypeOf(m.attributes), Object.prototype);
});

test('osmand.decoder: a form body is read when the URL has no query', (t) => {
  const result = osmandProtocol.decodeHttp!(
    {
      method: 'POST',
      url: '/',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: Buffer.from('id=77&lat=10.5&lon=-3.25'),
    },
    ctx(),
  );
  t.is(result.identity, '77');
  t.is(result.messages[0].location?.longitudeDeg, -3.25);
});

test('osmand.decoder: JSON speeds are m/s, battery level a fraction, and a location array is a batch', (t) => {
  const body = JSON.stringify({
    device_id: 'abc',
    location: [
      {
        timestamp: '2021-07-21T08:06:34.444Z',
        coords: { latitude: -6.11, longitude: 106.68, speed: 10, heading: 63, accuracy: 3.8, altitude: 35.7 },
        battery: { level: 0.79, is_charging: true },
        alarm: 'sos',
      },
      {
        timestamp: '2021-07-21T08:07:34.444Z',
        coords: { latitude: -6.12, longitude: 106.69, speed: -1, heading: -1, accuracy: 5, altitude: 0 },
      },
    ],
  });
  const result = osmandProtocol.decodeHttp!(
    { method: 'POST', url: '/', headers: { 'content-type': 'application/json' }, body: Buffer.from(body) },
    ctx(),
  );
  t.is(result.status, 200);
  t.is(result.identity, 'abc');
  t.is(result.messages.length, 2);
  t.is(result.messages[0].location?.speedKmh, 36);
  t.is(result.messages[0].attributes.batteryLevel, 79);
  t.is(result.messages[0].attributes.charge, true);
  t.deepEqual(result.messages[0].alarms, ['sos']);
  t.is(result.messages[1].location?.speedKmh, undefined);
  t.is(result.messages[1].location?.courseDeg, undefined);
});

test('osmand.decoder: a JSON alarm that is no canonical alarm name stays an attribute', (t) => {
  const location = (alarm: string) => ({
    timestamp: '2021-07-21T08:06:34.444Z',
    coords: { latitude: -6.11, longitude: 106.68 },
    alarm,
  });
  const body = JSON.stringify({
    device_id: 'abc',
    location: [location('overspeed'), location('doorOpenedTwice'), location('toString')],
  });
  const result = osmandProtocol.decodeHttp!(
    { method: 'POST', url: '/', headers: { 'content-type': 'application/json' }, body: Buffer.from(body) },
    ctx(),
  );
  t.deepEqual(
    result.messages.map((m) => m.alarms),
    [['overspeed'], [], []],
  );
  t.deepEqual(
    result.messages.map((m) => m.attributes.alarm),
    [undefined, 'doorOpenedTwice', 'toString'],
  );
});

test('osmand.decoder: JSON without device_id, or not JSON, answers 400', (t) => {
  for (const body of [
    '{"location":{}}',
    '{not json',
    '[]',
    '{"device_id":"1","location":{"coords":{"latitude":"x","longitude":1}}}',
  ]) {
    const result = osmandProtocol.decodeHttp!(
      { method: 'POST', url: '/', headers: { 'content-type': 'application/json' }, body: Buffer.from(body) },
      ctx(),
    );
    t.is(result.status, 400, body);
  }
});

test('osmand.decoder: decode() reads a URL, a bare query, a JSON body or a raw request, as trackgate decode does', (t) => {
  const decode = (frame: string) => osmandProtocol.decode!(Buffer.from(frame), ctx());
  t.is(decode('/?id=123&lat=1&lon=2').identity, '123');
  t.is(decode('id=124&lat=1&lon=2').identity, '124');
  t.is(
    decode(
      '{"device_id":"125","location":{"coords":{"latitude":1,"longitude":2,"speed":0,"heading":0,"accuracy":1,"altitude":0}}}',
    ).identity,
    '125',
  );
  t.is(
    decode('POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\nid=126&lat=1&lon=2')
      .identity,
    '126',
  );
  t.throws(() => decode('/?lat=1&lon=2'), { instanceOf: ProtocolError });
  t.throws(() => decode(''), { instanceOf: ProtocolError });
});

test('osmand.decoder: a query without a usable timestamp is fixed at the receive time (ctx.now), as Traccar does', (t) => {
  for (const url of ['/?id=1&lat=1&lon=2', '/?id=1&lat=1&lon=2&timestamp=soon']) {
    const result = get(url);
    t.is(result.status, 200, url);
    t.deepEqual(result.messages[0].fixTime, NOW, url);
  }
  t.deepEqual(
    get('/?id=1&lat=1&lon=2&timestamp=1377177267').messages[0].fixTime,
    new Date(1377177267_000),
    'a timestamp wins',
  );
});
