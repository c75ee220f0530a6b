import test, { type ExecutionContext } from 'ava';
import { eelinkProtocol } from '../../../protocols/eelink/eelink.protocol.js';
import { envelope, envelopeChecksum } from '../../../protocols/eelink/eelink.encoder.js';
import { ProtocolError, type DecodeContext, type DecodeResult } from '../../../protocols/types.js';
import { runVectors, type Difference } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
/** NOW as the login answer writes it: UNIX seconds, u32 */
const NOW_HEX = (NOW.getTime() / 1000).toString(16).padStart(8, '0');
const decode = eelinkProtocol.decode!;
const hex = (s: string): Buffer => Buffer.from(s, 'hex');
const ctx = (o: Partial<DecodeContext> = {}): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum: 'accept',
  session: {},
  ...o,
});

/** The vectors describe the login answer (it holds the time) instead of giving its bytes: checked here from ctx.now. */
const loginAnswer = (index: string, wrap?: string): Difference => ({
  reason: 'the login answer holds the current time, so the vector describes it; checked byte-exact from ctx.now',
  instead(t: ExecutionContext, run: () => DecodeResult) {
    const r = run();
    t.is(r.messages.length, 0);
    const packet = `6767010009${index}${NOW_HEX}000100`;
    const want = wrap === undefined ? packet : envelope(wrap, hex(packet)).toString('hex');
    t.deepEqual(
      r.replies.map((b) => b.toString('hex')),
      [want],
    );
  },
});

runVectors(eelinkProtocol, {
  now: NOW,
  differences: {
    3: loginAnswer('0002', '352544071677471'),
    20: loginAnswer('0026'),
    23: loginAnswer('001b'),
  },
});

test('eelink.decoder: a TCP login names the device and is answered with the time, version 1 and mask 0', (t) => {
  const r = decode(hex('676701000c002603541880486128290120'), ctx());
  t.is(r.identity, '354188048612829');
  t.deepEqual(r.messages, []);
  t.is(Buffer.concat(r.replies).toString('hex'), `67670100090026${NOW_HEX}000100`);
});

test('eelink.decoder: a TCP packet before any login is answered but not read', (t) => {
  const r = decode(hex('67670300040021006E'), ctx());
  t.is(r.identity, undefined);
  t.deepEqual(r.messages, []);
  t.is(Buffer.concat(r.replies).toString('hex'), '67670300020021');
  const known = decode(hex('67670300040021006E'), ctx({ deviceId: '354188048612829' }));
  t.is(known.messages.length, 1);
  t.is(known.messages[0].attributes.ignition, true);
});

test('eelink.decoder: every packet of a datagram gets its own EL-wrapped answer, in order', (t) => {
  const imei = '352544071677471';
  const packets = hex(
    '67670300040021006E' + '676702001c02b259ae7387fcd360d6034332b2000000028f000a4f64002eb10101' + '67670300040022006E',
  );
  const r = eelinkProtocol.decodeDatagram!(envelope(imei, packets), ctx({ transport: 'udp' }));
  t.is(r.identity, imei);
  t.is(r.messages.length, 3);
  t.deepEqual(
    r.replies.map((b) => b.toString('hex')),
    [envelope(imei, hex('67670300020021')).toString('hex'), envelope(imei, hex('67670300020022')).toString('hex')],
    'the GPS packet 0x02 is not answered',
  );
});

test('eelink.decoder: the envelope checksum is checked: a warning under accept, an error under strict', (t) => {
  const good = envelope('352544071677471', hex('67670300040021006E'));
  t.is(envelopeChecksum(good, 6), good.readUInt16BE(4));
  const bad = Buffer.from(good);
  bad[5] ^= 0xff;
  const r = decode(bad, ctx({ transport: 'udp' }));
  t.truthy(r.checksumError);
  t.is(r.messages.length, 1);
  t.throws(() => decode(bad, ctx({ transport: 'udp', checksum: 'strict' })), { instanceOf: ProtocolError });
});

test('eelink.decoder: a 0x80 answer that is no position is a command result and a result attribute', (t) => {
  const text = Buffer.from('RELAY:OK', 'latin1');
  const body = Buffer.concat([hex('0005' + '01' + '00000000'), text]);
  const packet = Buffer.concat([hex(`676780${body.length.toString(16).padStart(4, '0')}`), body]);
  const r = decode(packet, ctx({ deviceId: '354188048612829' }));
  t.deepEqual(r.commandResults, [{ text: 'RELAY:OK' }]);
  t.is(r.messages[0].attributes.result, 'RELAY:OK');
  t.is(r.messages[0].location, undefined);
  t.is(Buffer.concat(r.replies).toString('hex'), '67678000020005');
});

test('eelink.decoder: a UDP sender session keeps the envelope IMEI for the encoder', (t) => {
  const c = ctx({ transport: 'udp' });
  decode(envelope('123456789012345', hex('67670300040021006E')), c);
  t.is(c.session['eelink.envelopeImei'], '123456789012345');
});

test('eelink.decoder: a truncated packet is a ProtocolError', (t) => {
  t.throws(() => decode(hex('676712003400e45c5b0ade'), ctx({ deviceId: '1' })), { instanceOf: ProtocolError });
});
