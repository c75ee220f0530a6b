import test from 'ava';
import { gt06Protocol } from '../../../protocols/gt06/gt06.protocol.js';
import { crc16X25 } from '../../../protocols/shared/crc.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 10, 21, 8, 9, 10));
const decode = gt06Protocol.decode!;

function ctx(session: Record<string, unknown> = {}, checksum: DecodeContext['checksum'] = 'accept'): DecodeContext {
  return { now: NOW, transport: 'tcp', checksum, session };
}

runVectors(gt06Protocol, { now: NOW });

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
  t.deepEqual(
    r.replies.map((b) => b.toString('hex')),
    ['787805010001d9dc0d0a'],
  );
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
  t.deepEqual(
    r.replies.map((b) => b.toString('hex')),
    ['787805130040ba7c0d0a'],
  );
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
  t.throws(() => decode(Buffer.from('7979000b70000300200102000100000d0a', 'hex'), ctx()), {
    instanceOf: ProtocolError,
  });
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
  t.deepEqual(
    r.replies.map((b) => b.toString('hex')),
    ['787800691901210509030d0a'],
  );
  t.is(r.messages[0].fixTime?.toISOString(), '2019-01-21T05:09:03.000Z');
  t.true(String(r.messages[0].attributes.network).includes('"cellTowers"'));
});

test('gt06.decoder: command responses 0x80-0x82 and types it does not decode (0x7878 or 0x7979) get no ack', (t) => {
  t.deepEqual(decode(frame78(0x81, '0300000000'), ctx()).replies, []);
  t.deepEqual(decode(Buffer.from('79790005840016bb1a0d0a', 'hex'), ctx()).replies, []);
  for (const type of [0x08, 0xff]) {
    const r = decode(frame78(type, '00'), ctx());
    t.deepEqual(r.replies, [], `type 0x${type.toString(16)} is not acknowledged`);
    t.deepEqual(r.messages, []);
    t.regex(r.warnings?.[0] ?? '', /is not decoded: not acknowledged/);
  }
});

test('gt06.decoder: a photo chunk decoded twice (the gateway decodes again for a changed model) is counted once', (t) => {
  const session: Record<string, unknown> = {};
  // 0x35 photo info: time, fix, lat, lon, camera, source, format (18 bytes), size 2048, picture id 7
  const info = decode(frame78(0x35, '00'.repeat(18) + '00000800' + '00000007'), ctx(session));
  const requestedOffset = (reply: Buffer): number => reply.readUInt32BE(4 + 4);
  t.is(requestedOffset(info.replies[0]), 0);
  // 0x7979 0x36 photo data: picture id 7, offset 0, 1024 bytes
  const content = Buffer.concat([Buffer.from('00000007' + '00000000' + '0400', 'hex'), Buffer.alloc(1024, 0xab)]);
  const body = Buffer.concat([Buffer.from([0x79, 0x79, 0, 0, 0x36]), content, Buffer.from([0, 2])]);
  body.writeUInt16BE(body.length - 4 + 2, 2);
  const crc = Buffer.alloc(2);
  crc.writeUInt16BE(crc16X25(body, 2, body.length));
  const data = Buffer.concat([body, crc, Buffer.from([0x0d, 0x0a])]);
  for (const time of ['first', 'second']) {
    const r = decode(data, ctx(session));
    t.is(r.warnings, undefined, time);
    t.is(r.replies.length, 1, `${time}: the next chunk is asked for`);
    t.is(requestedOffset(r.replies[0]), 1024, `${time}: from offset 1024`);
  }
});
