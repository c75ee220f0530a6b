import test from 'ava';
import { gps103Protocol } from '../../../protocols/gps103/gps103.protocol.js';
import { CommandError, type CommandContext } from '../../../protocols/types.js';
import { runEncoderVectors } from '../../helpers/vector-runner.js';

const IMEI = '123456789012345';
const encode = gps103Protocol.encodeCommand!;
const ctx = (o: Partial<CommandContext> = {}): CommandContext => ({
  deviceId: IMEI,
  now: new Date(Date.UTC(2026, 0, 2)),
  serial: 0,
  ...o,
});

runEncoderVectors(gps103Protocol, {
  58: { encode: () => encode('H,080', ctx()).bytes },
});

test('gps103.encoder: a text command follows **,imei:<imei>, with no terminator and nothing to match', (t) => {
  const { bytes, match } = encode('C,30s', ctx());
  t.is(bytes.toString('latin1'), `**,imei:${IMEI},C,30s`);
  t.deepEqual(match, {});
});

test('gps103.encoder: ";", CR or LF in the text is refused as a frame delimiter', (t) => {
  for (const text of ['B;', 'B\r', 'B\nC,30s']) {
    const e = t.throws(() => encode(text, ctx()), { instanceOf: CommandError });
    t.is(e?.reason, 'DELIMITER', JSON.stringify(text));
    t.is(e?.protocol, 'gps103');
  }
});

test('gps103.encoder: the frame stays within the 2,048 bytes of a GPS103 frame', (t) => {
  // **,imei:<15 digits>, is 24 bytes
  t.is(encode('x'.repeat(2024), ctx()).bytes.length, 2048);
  t.is(t.throws(() => encode('x'.repeat(2025), ctx()), { instanceOf: CommandError })?.reason, 'TOO_LONG');
});

test('gps103.encoder: an empty or non-ASCII text, or an id that is not digits, is refused', (t) => {
  t.is(t.throws(() => encode('', ctx()), { instanceOf: CommandError })?.reason, 'EMPTY');
  t.is(t.throws(() => encode('H,080°', ctx()), { instanceOf: CommandError })?.reason, 'CHARSET');
  t.is(t.throws(() => encode('B', ctx({ deviceId: '359,B;' })), { instanceOf: CommandError })?.reason, 'DEVICE_ID');
});
