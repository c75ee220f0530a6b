import test from 'ava';
import { watchProtocol } from '../../../protocols/watch/watch.protocol.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const decode = watchProtocol.decode!;
const ctx = (session: Record<string, unknown> = {}): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum: 'accept',
  session,
});
const text = (s: string): Buffer => Buffer.from(s, 'latin1');

runVectors(watchProtocol, { now: NOW, everyFrameNamesItsDevice: true });

test('watch.decoder: LK is answered LK with the maker and id the watch used; steps and battery are kept', (t) => {
  const bare = decode(text('[SG*8800000015*0002*LK]'), ctx());
  t.is(bare.identity, '8800000015');
  t.deepEqual(bare.replies.map(String), ['[SG*8800000015*0002*LK]']);
  t.deepEqual(bare.messages, []);
  const full = decode(text('[3G*9705141740*000D*LK,1200,0,53]'), ctx());
  t.deepEqual(full.replies.map(String), ['[3G*9705141740*0002*LK]']);
  t.deepEqual(full.messages, [{ alarms: [], attributes: { steps: 1200, batteryLevel: 53 } }]);
});

test('watch.decoder: a frame with an index is answered with the same index; the session remembers maker and index', (t) => {
  const session: Record<string, unknown> = {};
  const r = decode(text('[ZJ*014111001350304*0034*0009*LK,0,0,19]'), ctx(session));
  t.deepEqual(r.replies.map(String), ['[ZJ*014111001350304*0034*0002*LK]']);
  t.deepEqual(session, { 'watch.maker': 'ZJ', 'watch.indexed': true });
  decode(text('[3G*1*0002*LK]'), ctx(session));
  t.deepEqual(session, { 'watch.maker': '3G', 'watch.indexed': false });
});

test('watch.decoder: UD is a position in decimal degrees and km/h with cells and Wi-Fi, and is not answered', (t) => {
  const r = decode(
    text(
      '[3G*4700222306*011F*UD2,120316,140444,A,48.779045,N, 9.1574736,E,0.57,12.8,0.0,7,28,77,0,0,00000000,2,2,262,1,21041,9067,121,21041,5981,116,2,WG-Superlativ,34:31:c4:c8:a9:22,-67,EasyBox,18:83:bf:28:e8:f4,-70]',
    ),
    ctx(),
  );
  t.deepEqual(r.replies, []);
  const m = r.messages[0];
  t.is(m.fixTime!.toISOString(), '2016-03-12T14:04:44.000Z');
  t.like(m.location, {
    latitudeDeg: 48.779045,
    longitudeDeg: 9.1574736,
    valid: true,
    speedKmh: 0.57,
    courseDeg: 12.8,
    altitudeM: 0,
    satellites: 7,
  });
  t.like(m.attributes, { rssi: 28, batteryLevel: 77, steps: 0 });
  t.deepEqual(JSON.parse(String(m.attributes.network)), {
    cellTowers: [
      { mobileCountryCode: 262, mobileNetworkCode: 1, locationAreaCode: 21041, cellId: 9067, signalStrength: 121 },
      { mobileCountryCode: 262, mobileNetworkCode: 1, locationAreaCode: 21041, cellId: 5981, signalStrength: 116 },
    ],
    wifiAccessPoints: [
      { macAddress: '34:31:c4:c8:a9:22', signalStrength: -67 },
      { macAddress: '18:83:bf:28:e8:f4', signalStrength: -70 },
    ],
  });
  t.deepEqual(m.alarms, []);
});

test('watch.decoder: S and W make a coordinate negative; a signed value with N/E keeps its sign', (t) => {
  const at = (lat: string, lon: string) =>
    decode(text(`[SG*1*0050*UD,010120,000000,A,${lat},${lon},0,0,0,0,0,0,0,0,00000000,0,0]`), ctx()).messages[0]
      .location!;
  t.like(at('22.5,S', '113.8,W'), { latitudeDeg: -22.5, longitudeDeg: -113.8 });
  t.like(at('-33.48,N', '-70.76,E'), { latitudeDeg: -33.48, longitudeDeg: -70.76 });
  t.like(at('0.5,', '0.25,'), { latitudeDeg: 0.5, longitudeDeg: 0.25 });
});

test('watch.decoder: AL is answered AL and maps its status bits to alarms; no mapped bit is a general alarm', (t) => {
  const al = (status: string) =>
    decode(
      text(
        `[SG*9051004074*0058*AL,120117,145602,V,40.058413,N,76.336618,W,11.519,188,99,00,01,80,0,50,${status},0,1,0,0,,10]`,
      ),
      ctx(),
    );
  t.deepEqual(al('00010000').replies.map(String), ['[SG*9051004074*0002*AL]']);
  t.deepEqual(al('00010000').messages[0].alarms, ['sos']);
  t.deepEqual(al('00000001').messages[0].alarms, ['lowBattery']);
  t.deepEqual(al('00000002').messages[0].alarms, ['geofenceExit']);
  t.deepEqual(al('00000004').messages[0].alarms, ['geofenceEnter']);
  t.deepEqual(al('00004000').messages[0].alarms, ['powerCut']);
  t.deepEqual(al('00100000').messages[0].alarms, ['removing']);
  t.deepEqual(al('00200000').messages[0].alarms, ['fallDown']);
  t.deepEqual(al('00400000').messages[0].alarms, ['fallDown']);
  t.deepEqual(al('00000000').messages[0].alarms, ['general']);
  const motion = al('00000010').messages[0];
  t.deepEqual(motion.alarms, ['general'], 'motion is no alarm');
  t.is(motion.attributes.motion, true);
});

test('watch.decoder: a UD with an alarm bit carries the alarm but gets no answer', (t) => {
  const r = decode(text('[SG*1*0050*UD,010120,000000,A,1.0,N,2.0,E,0,0,0,0,0,0,0,0,00200000,0,0]'), ctx());
  t.deepEqual(r.messages[0].alarms, ['fallDown']);
  t.deepEqual(r.replies, []);
});

test('watch.decoder: INIT, TKQ and JXTK get their answers', (t) => {
  t.deepEqual(decode(text('[SG*1*0004*INIT]'), ctx()).replies.map(String), ['[SG*1*0006*INIT,1]']);
  t.deepEqual(decode(text('[3G*8800000015*0004*TKQ2]'), ctx()).replies.map(String), ['[3G*8800000015*0004*TKQ2]']);
  t.deepEqual(decode(text('[CS*1*0010*JXTK,4,a,1,2,xxxx]'), ctx()).replies.map(String), ['[CS*1*0007*JXTKR,1]']);
});

test('watch.decoder: health reports become attributes', (t) => {
  t.deepEqual(decode(text('[3G*4700609403*0013*bphrt,120,79,73,,,,]'), ctx()).messages[0].attributes, {
    pressureHigh: 120,
    pressureLow: 79,
    heartRate: 73,
  });
  t.deepEqual(decode(text('[CS*1*0008*PULSE,72]'), ctx()).messages[0].attributes, { heartRate: 72 });
  t.deepEqual(decode(text('[3G*1*000B*oxygen,0,98]'), ctx()).messages[0].attributes, { bloodOxygen: 98 });
  t.deepEqual(
    decode(text('[3G*1*000E*btemp2,0,35.29]'), ctx()).messages,
    [],
    'btemp2 without its flag carries no temperature',
  );
});

test('watch.decoder: a frame of no report type is the answer to a command, tied by its word', (t) => {
  const r = decode(text('[SG*8800000015*0002*CR]'), ctx());
  t.deepEqual(r.commandResults, [{ text: 'CR', command: 'CR' }]);
  t.deepEqual(r.messages, []);
  t.deepEqual(r.replies, []);
  t.deepEqual(decode(text('[SG*1*0006*SOS1,1]'), ctx()).commandResults, [{ text: 'SOS1,1', command: 'SOS1' }]);
  t.deepEqual(
    decode(text('[SG*1*0004*TK,1]'), ctx()).commandResults,
    [{ text: 'TK,1', command: 'TK' }],
    'TK,1 answers a voice message',
  );
  t.is(decode(text('[SG*1*0002*LK]'), ctx()).commandResults, undefined);
  t.is(
    decode(text('[SG*1*0050*UD,010120,000000,A,1.0,N,2.0,E,0,0,0,0,0,0,0,0,0,0,0]'), ctx()).commandResults,
    undefined,
  );
});

test('watch.decoder: malformed frames throw ProtocolError', (t) => {
  for (const bad of [
    '[SG*1]',
    'SG*1*0002*LK]',
    '[S*1*0002*LK]',
    '[SG*1*LK]',
    '[SG**0002*LK]',
    '[SG*1*0050*UD,010120,000000,A,91.0,N,2.0,E,0,0,0,0,0,0,0,0,0,0,0]',
    '[SG*1*0050*UD,011320,000000,A,1.0,N,2.0,E,0,0,0,0,0,0,0,0,0,0,0]',
    '[SG*1*0010*UD,010120,000000]',
  ]) {
    t.throws(() => decode(text(bad), ctx()), { instanceOf: ProtocolError }, bad);
  }
});
