import test from 'ava';
import { h02Protocol } from '../../../protocols/h02/h02.protocol.js';
import { createH02Splitter } from '../../../protocols/h02/h02.frame.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const decode = h02Protocol.decode!;

function ctx(transport: DecodeContext['transport'] = 'tcp'): DecodeContext {
  return { now: NOW, transport, checksum: 'accept', session: {} };
}

runVectors(h02Protocol, {
  now: NOW,
  // `new H02FrameDecoder(N)` in Traccar's frame tests: N is the fixed binary length (0 = auto-detect)
  splitterFor: (v) => {
    const m = /H02FrameDecoder\((\d+)\)/.exec(v.test_ctor ?? '');
    const messageLength = m ? Number(m[1]) : 0;
    return createH02Splitter(messageLength ? { messageLength } : {});
  },
});

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
  const r = decode(
    text('*HQ,7401004662,NBR,160453,234,10,0,2,21580,27766,-67,21580,27766,-67,291019,FFFFFBFF,6#'),
    ctx(),
  );
  t.deepEqual(r.replies.map(String), ['*HQ,7401004662,V4,NBR,20260102030405#']);
  t.is(r.messages[0].location, undefined);
  t.is(r.messages[0].fixTime!.toISOString(), '2019-10-29T16:04:53.000Z');
});

test("h02.decoder: positions other than V1 get no reply (Traccar's optional R12 acknowledgement is not sent)", (t) => {
  const v2 = decode(text('*HQ,353505221264507,V2,100220,0,5238.26259,N,00507.33983,E,0.25,0,280917,FFFFFFFF#'), ctx());
  t.is(v2.messages.length, 1);
  t.deepEqual(v2.replies, []);
  const bin = decode(Buffer.from('2441060116601245431311165035313006004318210e000000fffffbffff0024', 'hex'), ctx());
  t.is(bin.messages.length, 1);
  t.deepEqual(bin.replies, []);
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
  const r = decode(
    Buffer.from('24410600082621532131081504419390060740418306000000fffffbfdff0015060000002c02dc0c000000001f', 'hex'),
    ctx(),
  );
  const m = r.messages[0];
  t.is(r.identity, '4106000826');
  t.true(Math.abs(m.location!.latitudeDeg - 4.69898) < 1e-5);
  t.true(Math.abs(m.location!.longitudeDeg + 74.06971) < 1e-5);
  t.deepEqual(m.alarms, ['sos']);
  const fast = decode(Buffer.from('2410307310010503162209022212874500113466574C014028fffffbffff0000', 'hex'), ctx())
    .messages[0];
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
  const r = h02Protocol.decodeDatagram!(
    text('*HQ,4210051415,V1,164549,A,0956.3869,N,08406.7068,W,000.00,000,221215,FFFFFBFF#'),
    ctx('udp'),
  );
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
  for (const frame of bad)
    t.throws(() => decode(frame, ctx()), { instanceOf: ProtocolError }, frame.toString('latin1'));
});
