import test, { type ExecutionContext } from 'ava';
import { gt06Protocol } from '../../../protocols/gt06/gt06.protocol.js';
import { createGt06Splitter } from '../../../protocols/gt06/gt06.frame.js';
import { crc16X25 } from '../../../protocols/shared/crc.js';
import { ProtocolError, type DecodeContext, type DecodedMessage, type DecodeResult } from '../../../protocols/types.js';
import { loadVectors, frameBytes, type Vector, vectorTime, vectorValue } from '../../helpers/vectors.js';

const NOW = new Date(Date.UTC(2026, 10, 21, 8, 9, 10));
const decode = gt06Protocol.decode!;

/** Vectors this decoder cannot pass, by line, with the reason. Kept empty on purpose. */
const KNOWN_FAILURES: Record<number, string> = {};

function ctx(session: Record<string, unknown> = {}, checksum: DecodeContext['checksum'] = 'accept'): DecodeContext {
  return { now: NOW, transport: 'tcp', checksum, session };
}

/** `decoder.setModelOverride("X")` in a vector's setup becomes the `gt06.model` session key */
function sessionFor(v: Vector): Record<string, unknown> {
  const session: Record<string, unknown> = {};
  for (const line of [v.setup ?? []].flat()) {
    const m = /setModelOverride\("([^"]*)"\)/.exec(line);
    if (m) session['gt06.model'] = m[1];
  }
  return session;
}

function checkPosition(t: ExecutionContext, m: DecodedMessage | undefined, e: Record<string, unknown>, where: string): void {
  t.truthy(m?.location, `${where}: a message with a location`);
  if (!m?.location) return;
  const l = m.location;
  t.true(Math.abs(l.latitudeDeg) <= 90 && Math.abs(l.longitudeDeg) <= 180, `${where}: lat/lon in range`);
  if (l.speedKmh !== undefined) t.true(l.speedKmh >= 0 && l.speedKmh / 1.852 <= 869, `${where}: speed 0-869 kn`);
  if (l.courseDeg !== undefined) t.true(l.courseDeg >= 0 && l.courseDeg <= 360, `${where}: course 0-360`);
  if (m.fixTime) t.true(m.fixTime.getTime() > Date.UTC(1999, 0, 1), `${where}: time after 1999`);
  if (typeof e.time === 'string') t.is(m.fixTime && vectorTime(m.fixTime), e.time, `${where}: time`);
  if (typeof e.valid === 'boolean') t.is(l.valid, e.valid, `${where}: valid`);
  if (typeof e.lat === 'number') t.true(Math.abs(l.latitudeDeg - e.lat) < 1e-5, `${where}: lat ${l.latitudeDeg}`);
  if (typeof e.lon === 'number') t.true(Math.abs(l.longitudeDeg - e.lon) < 1e-5, `${where}: lon ${l.longitudeDeg}`);
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
      if (e.checkLocation !== false) {
        for (const m of r.messages) checkPosition(t, m, (e.appliesTo as Record<string, unknown>) ?? {}, where);
      }
      break;
    case 'attributes':
      t.true(r.messages.some((m) => Object.keys(m.attributes).length > 0), `${where}: non-empty attributes`);
      break;
    case 'attribute': {
      t.true(r.messages.length > 0, `${where}: a message`);
      const actual = r.messages[0] && vectorValue(r.messages[0], String(e.key));
      if (e.value === null) t.is(actual, undefined, `${where}: no ${String(e.key)}`);
      else if (typeof e.value === 'number' && typeof actual === 'number') {
        t.true(Math.abs(actual - e.value) <= 1e-6 * Math.max(1, Math.abs(e.value)), `${where}: ${String(e.key)} ${actual} vs ${e.value}`);
      } else t.deepEqual(actual, e.value, `${where}: ${String(e.key)}`);
      break;
    }
    case 'null':
      t.is(r.messages.length, 0, `${where}: no messages`);
      break;
    case 'notNull':
      t.true(r.messages.length > 0 || r.identity !== undefined, `${where}: a message or an identity`);
      break;
    default:
      t.fail(`${where}: unknown assert ${e.assert}`);
  }
  if (v.ack) t.is(r.replies[0]?.toString('hex'), v.ack.data.toLowerCase(), `${where}: ack`);
}

// Encoder vectors (server -> device commands) are out of scope for a decoder and are not run here.
for (const v of loadVectors('gt06')) {
  if (v.test_kind === 'encoder') continue;
  const title = `gt06.decoder: vector line ${v.line} (${v.msg_type ?? v.kind}, ${v.test_kind}, ${v.expect.assert})`;
  if (KNOWN_FAILURES[v.line]) {
    test.skip(`${title}: ${KNOWN_FAILURES[v.line]}`, () => {});
    continue;
  }
  if (v.test_kind === 'frame_decoder') {
    test(title, (t) => {
      const frames = createGt06Splitter().push(frameBytes(v));
      if (v.expect.assert === 'null') t.is(frames.length, 0);
      else t.deepEqual(frames.map((f) => f.toString('hex')), [(v.expect.frame_out as string | string[] | undefined) ?? v.frame_out ?? []].flat().map((h) => h.toLowerCase()));
    });
    continue;
  }
  test(title, (t) => {
    const r = decode(frameBytes(v), ctx(sessionFor(v)));
    checkExpect(t, v, r);
  });
}

// ---------------------------------------------------------------------------------------------

/** builds a 0x7878 frame with a correct CRC around `type` and `content` */
function frame78(type: number, content: string, serial = 1): Buffer {
  const body = Buffer.from(content, 'hex');
  const f = Buffer.alloc(3 + 1 + body.length + 6);
  f.writeUInt16BE(0x7878, 0);
  f[2] = 5 + body.length;
  f[3] = type;
  body.copy(f, 4);
  f.writeUInt16BE(serial, 4 + body.length);
  f.writeUInt16BE(crc16X25(f, 2, 6 + body.length), 6 + body.length);
  f[f.length - 2] = 0x0d;
  f[f.length - 1] = 0x0a;
  return f;
}

test('gt06.decoder: login names the device, stores no messages and answers with the general ack', (t) => {
  const r = decode(Buffer.from('78780d01012345678901234500018cdd0d0a', 'hex'), ctx());
  t.is(r.identity, '123456789012345');
  t.deepEqual(r.messages, []);
  t.deepEqual(r.replies.map((b) => b.toString('hex')), ['787805010001d9dc0d0a']);
  t.is(r.rejection, undefined);
});

test('gt06.decoder: login time zone bits are kept in the session and shift later fix times', (t) => {
  const session: Record<string, unknown> = {};
  // 0x3201: offset 0x320 = 800 -> +08:00, bit 3 clear (east)
  decode(frame78(0x01, '0123456789012345' + '100b' + '3201'), ctx(session));
  t.is(session['gt06.tzOffsetMin'], 480);
  const gps = frame78(0x10, '0b031a0b1b31' + 'cc027ac7fd0c4657bf0115210001');
  const r = decode(gps, ctx(session));
  t.is(r.messages[0].fixTime?.toISOString(), '2011-03-26T03:27:49.000Z');
  // 0x190a: 0x190 = 400 -> 04:00, bit 3 set (west)
  decode(frame78(0x01, '0864717003664467' + '100f' + '190a'), ctx(session));
  t.is(session['gt06.tzOffsetMin'], -240);
  t.is(decode(gps, ctx(session)).messages[0].fixTime?.toISOString(), '2011-03-26T15:27:49.000Z');
  decode(frame78(0x01, '0123456789012345'), ctx(session));
  t.false('gt06.tzOffsetMin' in session, 'a login without the bits resets the zone');
});

test('gt06.decoder: heartbeat 0x13 is acknowledged with its serial', (t) => {
  const r = decode(Buffer.from('7878131340b2fa000201040000000000011c00400e550d0a', 'hex'), ctx());
  t.deepEqual(r.replies.map((b) => b.toString('hex')), ['787805130040ba7c0d0a']);
  t.is(r.messages.length, 1);
  t.is(r.messages[0].location, undefined);
});

test('gt06.decoder: a CRC mismatch is a warning by default and an error when strict', (t) => {
  const bad = Buffer.from('78780d01012345678901234500018cde0d0a', 'hex');
  const r = decode(bad, ctx());
  t.is(r.identity, '123456789012345');
  t.true((r.warnings ?? []).some((w) => w.includes('CRC')));
  const e = t.throws(() => decode(bad, ctx({}, 'strict')), { instanceOf: ProtocolError });
  t.false(e?.framingLost);
});

test('gt06.decoder: truncated and foreign frames throw ProtocolError', (t) => {
  const full = frame78(0x12, '0f081b121d37cb01c8e2cc08afd3c020d50201940701d600a119');
  for (const cut of [4, 8, 12]) {
    const truncated = Buffer.concat([full.subarray(0, cut), Buffer.from('00010000' + '0d0a', 'hex')]);
    t.throws(() => decode(truncated, ctx()), { instanceOf: ProtocolError }, `cut at ${cut}`);
  }
  // 0x70 module declaring 0x20 bytes where 2 remain
  t.throws(() => decode(Buffer.from('7979000b70000300200102000100000d0a', 'hex'), ctx()), { instanceOf: ProtocolError });
  t.throws(() => decode(Buffer.from('24240d0a', 'hex'), ctx()), { instanceOf: ProtocolError });
  t.throws(() => decode(Buffer.from('7878', 'hex'), ctx()), { instanceOf: ProtocolError });
});

test('gt06.decoder: time request 0x8A is answered with the context clock in UTC', (t) => {
  const r = decode(frame78(0x8a, '', 7), ctx());
  t.is(r.replies.length, 1);
  t.is(r.replies[0].subarray(0, 10).toString('hex'), '78780b8a1a0b1508090a');
  t.deepEqual(r.messages, []);
});

test('gt06.decoder: AZ735 0x7979 packets are acknowledged in the 0x7979 form', (t) => {
  const v = loadVectors('gt06').find((x) => x.line === 73)!;
  const r = decode(frameBytes(v), ctx());
  t.is(r.replies[0].subarray(0, 5).toString('hex'), '7979000533');
});

test('gt06.decoder: Wi-Fi packets are echoed with their BCD time', (t) => {
  const r = decode(Buffer.from('7878006919012105090303028f01007549e05a00bc9c5c5a007a8d1a5a0d0a', 'hex'), ctx());
  t.deepEqual(r.replies.map((b) => b.toString('hex')), ['787800691901210509030d0a']);
  t.is(r.messages[0].fixTime?.toISOString(), '2019-01-21T05:09:03.000Z');
  t.true(String(r.messages[0].attributes.network).includes('"cellTowers"'));
});

test('gt06.decoder: command responses 0x80-0x82 get no ack and unknown 0x7979 types are ignored', (t) => {
  t.deepEqual(decode(frame78(0x81, '0300000000'), ctx()).replies, []);
  t.deepEqual(decode(Buffer.from('79790005840016bb1a0d0a', 'hex'), ctx()).replies, []);
  t.is(decode(frame78(0x08, '00'), ctx()).replies.length, 1, 'an unknown 0x7878 type is still acknowledged');
});
