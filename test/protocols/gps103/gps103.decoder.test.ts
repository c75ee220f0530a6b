import test, { type ExecutionContext } from 'ava';
import { gps103Protocol } from '../../../protocols/gps103/gps103.protocol.js';
import { ProtocolError, type DecodeContext, type DecodeResult, type DecodedMessage } from '../../../protocols/types.js';
import { loadVectors, frameBytes, type Vector, vectorTime, vectorValue } from '../../helpers/vectors.js';

const vectors = loadVectors('gps103');
const NOW = new Date();

/** Vectors this decoder cannot pass, by line, with the reason. Keep empty. */
const KNOWN_FAILURES: Record<number, string> = {};

/** GPS103 vectors need no decoder state (`setup` is never set for them). */
function sessionFor(): Record<string, unknown> {
  return {};
}

function decodeVector(v: Vector): DecodeResult {
  const ctx: DecodeContext = { now: NOW, transport: v.transport, checksum: 'accept', session: sessionFor() };
  const frame = frameBytes(v);
  return v.transport === 'udp' ? gps103Protocol.decodeDatagram!(frame, ctx) : gps103Protocol.decode!(frame, ctx);
}

function assertPosition(t: ExecutionContext, m: DecodedMessage | undefined, e: Record<string, unknown>): void {
  t.truthy(m?.location, 'a message with a location');
  if (!m?.location) return;
  if (typeof e.time === 'string') t.is(m.fixTime && vectorTime(m.fixTime), e.time);
  if (typeof e.valid === 'boolean') t.is(m.location.valid, e.valid);
  if (typeof e.lat === 'number') t.true(Math.abs(m.location.latitudeDeg - e.lat) < 1e-5, `lat ${m.location.latitudeDeg}`);
  if (typeof e.lon === 'number') t.true(Math.abs(m.location.longitudeDeg - e.lon) < 1e-5, `lon ${m.location.longitudeDeg}`);
}

/** These decoders report satellites on the location; the vectors name them `sat`. */
function attributeOf(m: DecodedMessage, key: string): unknown {
  return key === 'sat' ? (m.attributes.sat ?? m.location?.satellites) : vectorValue(m, key);
}

function assertExpectation(t: ExecutionContext, v: Vector, r: DecodeResult): void {
  const e = v.expect;
  switch (e.assert) {
    case 'position':
      assertPosition(t, r.messages.find((m) => m.location), e);
      break;
    case 'positions':
      t.true(r.messages.length > 0, 'at least one message');
      if (e.checkLocation !== false) for (const m of r.messages) t.truthy(m.location, 'every message has a location');
      break;
    case 'attribute': {
      const actual = attributeOf(r.messages[0] ?? { alarms: [], attributes: {} }, String(e.key));
      if (typeof e.value === 'number' && typeof actual === 'number') t.true(Math.abs(actual - e.value) < 1e-3, `${String(e.key)}=${actual}`);
      else t.deepEqual(actual, e.value);
      break;
    }
    case 'attributes':
      t.true(r.messages.some((m) => Object.keys(m.attributes).length > 0), 'a message with attributes');
      break;
    case 'null':
      t.is(r.messages.length, 0);
      break;
    case 'notNull':
      t.true(r.messages.length > 0 || r.identity !== undefined);
      break;
    default:
      t.fail(`unknown assertion ${e.assert}`);
  }
  if (v.ack) {
    const ack = v.ack.encoding === 'hex' ? Buffer.from(v.ack.data, 'hex') : Buffer.from(v.ack.data, 'latin1');
    t.deepEqual(Buffer.concat(r.replies).toString('hex'), ack.toString('hex'), 'ack bytes');
  }
}

for (const v of vectors) {
  const title = `gps103.decoder: vector line ${v.line} (${v.kind}, ${v.expect.assert}, ${v.transport})`;
  // encoder vectors (server -> device commands) are out of scope for a decoder
  if (v.test_kind === 'encoder') continue;
  if (KNOWN_FAILURES[v.line]) {
    test.failing(`${title}: ${KNOWN_FAILURES[v.line]}`, (t) => assertExpectation(t, v, decodeVector(v)));
    continue;
  }
  if (v.test_kind === 'frame_decoder') {
    test(title, (t) => {
      const frames = gps103Protocol.createSplitter!().push(frameBytes(v));
      if (v.expect.assert === 'null') t.is(frames.length, 0);
      else t.is(frames[0]?.toString('hex'), String(v.expect.frame_out ?? v.frame_out).toLowerCase());
    });
    continue;
  }
  test(title, (t) => assertExpectation(t, v, decodeVector(v)));
}

const ctx = (over: Partial<DecodeContext> = {}): DecodeContext => ({ now: NOW, transport: 'tcp', checksum: 'accept', session: {}, ...over });
const decodeText = (s: string, c = ctx()): DecodeResult => gps103Protocol.decode!(Buffer.from(s, 'latin1'), c);
const replies = (r: DecodeResult): string[] => r.replies.map((b) => b.toString('latin1'));

test('gps103.decoder: the ##,imei: login names the device and replies LOAD', (t) => {
  const r = decodeText('##,imei:359586015829802,A;');
  t.is(r.identity, '359586015829802');
  t.deepEqual(r.messages, []);
  t.deepEqual(replies(r), ['LOAD']);
});

test('gps103.decoder: a bare IMEI heartbeat replies ON and names the device', (t) => {
  const r = decodeText('359586015829802;');
  t.is(r.identity, '359586015829802');
  t.deepEqual(replies(r), ['ON']);
});

test('gps103.decoder: the local time is corrected to UTC by its offset from the fix time', (t) => {
  // local 2015-10-30 08:01, UTC 00:01:01 -> UTC+8
  const r = decodeText('imei:359710045559474,tracker,151030080103,,F,000101.000,A,5443.3834,N,02512.9071,E,0.00,0;');
  t.is(r.messages[0].fixTime?.toISOString(), '2015-10-30T00:01:01.000Z');
});

test('gps103.decoder: speed is converted from knots to km/h', (t) => {
  const r = decodeText('imei:863070010423167,tracker,1211060621,,F,062152.000,A,2220.6914,N,11407.5506,E,15.85,347.84,');
  t.true(Math.abs(r.messages[0].location!.speedKmh! - 15.85 * 1.852) < 1e-9);
  t.is(r.messages[0].location!.courseDeg, 347.84);
});

test('gps103.decoder: help me is an sos alarm and is answered with **,imei:<imei>,E;', (t) => {
  const r = decodeText('imei:359586015829802,help me,0809231429,13554900601,F,062947.294,A,2234.4026,N,11354.3277,E,0.00,;');
  t.deepEqual(r.messages[0].alarms, ['sos']);
  t.deepEqual(replies(r), ['**,imei:359586015829802,E;']);
});

test('gps103.decoder: an LBS-only alarm has the alarm and no location', (t) => {
  const r = decodeText('imei:864895030279986,ac alarm,180404174252,,L,,,296a,,51f7,,,;');
  t.is(r.identity, '864895030279986');
  t.deepEqual(r.messages[0].alarms, ['powerCut']);
  t.is(r.messages[0].location, undefined);
});

test('gps103.decoder: text that is no gps103 sentence throws ProtocolError', (t) => {
  t.throws(() => decodeText('GET / HTTP/1.1'), { instanceOf: ProtocolError });
});

test('gps103.decoder: a datagram is decoded like a TCP sentence', (t) => {
  const s = 'imei:359710049092324,tracker,151027025958,,F,235957.000,A,2429.5156,N,04424.5828,E,0.01,27.91,,0,0,,,;';
  t.deepEqual(gps103Protocol.decodeDatagram!(Buffer.from(s), ctx({ transport: 'udp' })), decodeText(s));
});
