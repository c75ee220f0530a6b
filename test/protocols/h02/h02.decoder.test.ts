import test, { type ExecutionContext } from 'ava';
import { h02Protocol } from '../../../protocols/h02/h02.protocol.js';
import { createH02Splitter } from '../../../protocols/h02/h02.frame.js';
import { ProtocolError, type DecodeContext, type DecodedMessage, type DecodeResult } from '../../../protocols/types.js';
import { loadVectors, frameBytes, type Vector, vectorTime, vectorValue } from '../../helpers/vectors.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const decode = h02Protocol.decode!;

/** Vectors this decoder cannot pass, by line, with the reason. Kept empty on purpose. */
const KNOWN_FAILURES: Record<number, string> = {};

function ctx(session: Record<string, unknown> = {}, transport: DecodeContext['transport'] = 'tcp'): DecodeContext {
  return { now: NOW, transport, checksum: 'accept', session };
}

function checkGeneric(t: ExecutionContext, m: DecodedMessage, where: string): void {
  const l = m.location;
  if (!l) return;
  if (m.fixTime) {
    t.true(m.fixTime.getTime() > Date.UTC(1999, 0, 1), `${where}: time after 1999`);
    t.true(m.fixTime.getTime() < Date.now() + 25 * 3600_000, `${where}: time under now+25h`);
  }
  t.true(Math.abs(l.latitudeDeg) <= 90 && Math.abs(l.longitudeDeg) <= 180, `${where}: lat/lon in range`);
  if (l.speedKmh !== undefined) t.true(l.speedKmh >= 0 && l.speedKmh / 1.852 <= 869, `${where}: speed 0-869 kn`);
  if (l.courseDeg !== undefined) t.true(l.courseDeg >= 0 && l.courseDeg <= 360, `${where}: course 0-360`);
}

function checkPosition(t: ExecutionContext, m: DecodedMessage | undefined, e: Record<string, unknown>, where: string): void {
  t.truthy(m?.location, `${where}: a message with a location`);
  if (!m?.location) return;
  checkGeneric(t, m, where);
  if (typeof e.time === 'string') t.is(m.fixTime && vectorTime(m.fixTime), e.time, `${where}: time`);
  if (typeof e.valid === 'boolean') t.is(m.location.valid, e.valid, `${where}: valid`);
  if (typeof e.lat === 'number') t.true(Math.abs(m.location.latitudeDeg - e.lat) < 1e-5, `${where}: lat ${m.location.latitudeDeg}`);
  if (typeof e.lon === 'number') t.true(Math.abs(m.location.longitudeDeg - e.lon) < 1e-5, `${where}: lon ${m.location.longitudeDeg}`);
}

function checkExpect(t: ExecutionContext, v: Vector, r: DecodeResult): void {
  const e = v.expect;
  const where = `line ${v.line}`;
  switch (e.assert) {
    case 'position':
      checkPosition(t, r.messages.find((m) => m.location), e, where);
      break;
    case 'positions':
      t.true(r.messages.length > 0, `${where}: positions`);
      if (e.checkLocation !== false) r.messages.forEach((m) => checkPosition(t, m, (e.appliesTo as Record<string, unknown>) ?? {}, where));
      break;
    case 'attributes':
      t.true(r.messages.some((m) => Object.keys(m.attributes).length > 0), `${where}: non-empty attributes`);
      break;
    case 'attribute': {
      const actual = r.messages[0] && vectorValue(r.messages[0], String(e.key));
      if (typeof e.value === 'number' && typeof actual === 'number') {
        t.true(Math.abs(actual - e.value) <= Math.max(1e-6, Math.abs(e.value) * 1e-9), `${where}: ${String(e.key)} ${actual} vs ${e.value}`);
      } else {
        t.deepEqual(actual, e.value, `${where}: ${String(e.key)}`);
      }
      break;
    }
    case 'null':
      t.is(r.messages.length, 0, `${where}: no messages`);
      break;
    case 'notNull':
      t.true(r.messages.length > 0 || r.identity !== undefined, `${where}: something decoded`);
      break;
    default:
      t.fail(`${where}: unknown assert ${e.assert}`);
  }
  if (v.ack) {
    const expected = v.ack.encoding === 'hex' ? Buffer.from(v.ack.data, 'hex') : Buffer.from(v.ack.data, 'latin1');
    t.deepEqual(r.replies.map((b) => b.toString('hex')), [expected.toString('hex')], `${where}: ack`);
  }
}

/** `new H02FrameDecoder(N)`: N is h02.messageLength (0 = auto-detect) */
function splitterFor(v: Vector) {
  const m = /H02FrameDecoder\((\d+)\)/.exec(v.test_ctor ?? '');
  const messageLength = m ? Number(m[1]) : 0;
  return createH02Splitter(messageLength ? { messageLength } : {});
}

for (const v of loadVectors('h02')) {
  const title = `h02.decoder: vector line ${v.line} (${v.msg_type ?? v.kind}, ${v.test_kind}) meets "${v.expect.assert}"`;
  if (v.test_kind === 'encoder') continue; // server->device commands are out of scope for the decoder
  if (KNOWN_FAILURES[v.line]) {
    test.skip(`${title}: ${KNOWN_FAILURES[v.line]}`, () => {});
    continue;
  }
  if (v.test_kind === 'frame_decoder') {
    test(title, (t) => {
      const frames = splitterFor(v).push(frameBytes(v));
      if (v.expect.assert === 'null') {
        t.is(frames.length, 0);
        return;
      }
      const out = Array.isArray(v.frame_out) ? v.frame_out : [v.frame_out ?? v.expect.frame_out];
      const want = out.map((o) => (v.encoding === 'hex' ? String(o).toLowerCase() : Buffer.from(String(o), 'latin1').toString('hex')));
      t.deepEqual(frames.slice(0, want.length).map((f) => f.toString('hex')), want);
    });
    continue;
  }
  test(title, (t) => {
    const r = v.transport === 'udp' ? h02Protocol.decodeDatagram!(frameBytes(v), ctx({}, 'udp')) : decode(frameBytes(v), ctx());
    checkExpect(t, v, r);
  });
}

const text = (s: string): Buffer => Buffer.from(s, 'latin1');

test('h02.decoder: a V1 position is acked with V4,V1 and the UTC time, speed converted from knots', (t) => {
  const r = decode(text('*HQ,2130510938,V1,012632,A,0520.0663,N,10028.6324,E,10.00,023,100317,FFFFDFFF#'), ctx());
  t.is(r.identity, '2130510938');
  t.deepEqual(r.replies.map(String), ['*HQ,2130510938,V4,V1,20260102030405#']);
  t.true(Math.abs(r.messages[0].location!.speedKmh! - 18.52) < 1e-9);
  t.is(r.messages[0].location!.courseDeg, 23);
  t.is(r.messages[0].fixTime!.toISOString(), '2017-03-10T01:26:32.000Z');
});

test('h02.decoder: a heartbeat echoes its header and reports nothing else', (t) => {
  const r = decode(text('*HQ,135790246811220,V0#\r\n'), ctx());
  t.is(r.identity, '135790246811220');
  t.deepEqual(r.messages, []);
  t.deepEqual(r.replies.map(String), ['*HQ,135790246811220,V0#']);
  const h = decode(text('*HQ,135790246811220,HTBT,87#'), ctx());
  t.deepEqual(h.replies.map(String), ['*HQ,135790246811220,HTBT#']);
  t.is(h.messages[0].attributes.batteryLevel, 87);
});

test('h02.decoder: NBR is acked with V4,NBR and the UTC date-time', (t) => {
  const r = decode(text('*HQ,7401004662,NBR,160453,234,10,0,2,21580,27766,-67,21580,27766,-67,291019,FFFFFBFF,6#'), ctx());
  t.deepEqual(r.replies.map(String), ['*HQ,7401004662,V4,NBR,20260102030405#']);
  t.is(r.messages[0].location, undefined);
  t.is(r.messages[0].fixTime!.toISOString(), '2019-10-29T16:04:53.000Z');
});

test('h02.decoder: with h02.ack set, other positions are acked with R12', (t) => {
  const session = { 'h02.ack': true };
  const v2 = decode(text('*HQ,353505221264507,V2,100220,0,5238.26259,N,00507.33983,E,0.25,0,280917,FFFFFFFF#'), ctx(session));
  t.deepEqual(v2.replies.map(String), ['*HQ,353505221264507,R12,030405#']);
  const bin = decode(Buffer.from('2441060116601245431311165035313006004318210e000000fffffbffff0024', 'hex'), ctx(session));
  t.deepEqual(bin.replies.map(String), ['*HQ,4106011660,R12,030405#']);
  t.deepEqual(decode(Buffer.from('2441060116601245431311165035313006004318210e000000fffffbffff0024', 'hex'), ctx()).replies, []);
});

test('h02.decoder: status alarms are active when their bit is 0', (t) => {
  const at = (status: string) =>
    decode(text(`*HQ,1,V1,010203,A,5000.0000,N,01000.0000,E,0.00,0,010120,${status}#`), ctx()).messages[0];
  t.deepEqual(at('FFFFFBFF').alarms, []);
  t.deepEqual(at('FFFFFFFE').alarms, ['vibration']);
  t.deepEqual(at('FFFFFFFD').alarms, ['sos']);
  t.deepEqual(at('FFFBFFFF').alarms, ['sos']);
  t.deepEqual(at('FFFFFFFB').alarms, ['overspeed']);
  t.deepEqual(at('FFF7FFFF').alarms, ['powerCut']);
  t.is(at('FFFFFFFF').attributes.ignition, true);
  t.is(at('FFFFFBFF').attributes.ignition, false);
});

test('h02.decoder: a binary frame decodes BCD coordinates, knots and flags', (t) => {
  const r = decode(Buffer.from('24410600082621532131081504419390060740418306000000fffffbfdff0015060000002c02dc0c000000001f', 'hex'), ctx());
  const m = r.messages[0];
  t.is(r.identity, '4106000826');
  t.true(Math.abs(m.location!.latitudeDeg - 4.69898) < 1e-5);
  t.true(Math.abs(m.location!.longitudeDeg + 74.06971) < 1e-5);
  t.deepEqual(m.alarms, ['sos']);
  const fast = decode(Buffer.from('2410307310010503162209022212874500113466574C014028fffffbffff0000', 'hex'), ctx()).messages[0];
  t.true(Math.abs(fast.location!.speedKmh! - 14 * 1.852) < 1e-9);
  t.is(fast.location!.courseDeg, 28);
  t.false(fast.location!.valid);
});

test('h02.decoder: an X frame has the binary layout and names its device', (t) => {
  const r = decode(Buffer.from('5800009814991024031101175540227006012321670c000095fffffbffff0033', 'hex'), ctx());
  t.is(r.identity, '0000981499');
  t.true(Math.abs(r.messages[0].location!.latitudeDeg - 55.67045) < 1e-5);
});

test('h02.decoder: a UDP datagram decodes like a TCP frame', (t) => {
  const r = h02Protocol.decodeDatagram!(text('*HQ,4210051415,V1,164549,A,0956.3869,N,08406.7068,W,000.00,000,221215,FFFFFBFF#'), ctx({}, 'udp'));
  t.true(Math.abs(r.messages[0].location!.longitudeDeg + 84.11178) < 1e-5);
});

test('h02.decoder: malformed frames throw ProtocolError', (t) => {
  const bad = [
    Buffer.alloc(0),
    text('*HQ,123,V1,010203,A,5000.0000,N,01000.0000,E,0.00,0,010120,FFFFFFFF'),
    text('*HQ,12a4,V1#'),
    text('*HQ#'),
    text('*HQ,123,V1,010203,A,5000.0000,N,01000.0000,E,fast,0,010120,FFFFFFFF#'),
    text('*HQ,123,V1,010203,A,9500.0000,N,01000.0000,E,0.00,0,010120,FFFFFFFF#'),
    text('*HQ,123,NBR,160453,234,10#'),
    text('*HQ,123,LINK,180902,15#'),
    text('*HQ,123,V3,095426#'),
    Buffer.from('2441060116601245431311165035313006004318210e00', 'hex'),
    Buffer.from('24410601166012454313AA165035313006004318210e000000fffffbffff0024', 'hex'),
    text('hello'),
  ];
  for (const frame of bad) t.throws(() => decode(frame, ctx()), { instanceOf: ProtocolError }, frame.toString('latin1'));
});
