import test from 'ava';
import { startekProtocol } from '../../../protocols/startek/startek.protocol.js';
import { CommandError, type CommandContext } from '../../../protocols/types.js';
import { runEncoderVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const CTX: CommandContext = { deviceId: '123456789012345', now: NOW, serial: 0 };
const encode = startekProtocol.encodeCommand!;
const text = (b: Buffer): string => b.toString('latin1');

runEncoderVectors(startekProtocol, {
  // engineStop is output 1 on: `900,1,1`
  13: { encode: () => encode('900,1,1', CTX).bytes },
});

test('startek.encoder: length from the comma before the IMEI, 8-bit sum checksum, CR LF; the answer echoes nothing', (t) => {
  const { bytes, match } = encode('900,1,0', CTX);
  t.is(text(bytes), '$$:24,123456789012345,900,1,09E\r\n');
  t.deepEqual(match, {});
  t.is(text(encode('900,2,1', { ...CTX, deviceId: '860262050015424' }).bytes), '$$:24,860262050015424,900,2,191\r\n');
});

test('startek.encoder: CR and LF are refused, as is a device id that is not digits', (t) => {
  t.is(t.throws(() => encode('900,1,1\r', CTX), { instanceOf: CommandError })?.reason, 'DELIMITER');
  t.is(t.throws(() => encode('', CTX), { instanceOf: CommandError })?.reason, 'EMPTY');
  t.is(t.throws(() => encode('900', { ...CTX, deviceId: 'AB12' }), { instanceOf: CommandError })?.reason, 'DEVICE_ID');
  t.is(t.throws(() => encode('x'.repeat(9000), CTX), { instanceOf: CommandError })?.reason, 'TOO_LONG');
});
