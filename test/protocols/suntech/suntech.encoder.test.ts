import test from 'ava';
import { suntechProtocol } from '../../../protocols/suntech/suntech.protocol.js';
import { CommandError, type CommandContext } from '../../../protocols/types.js';
import { runEncoderVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const CTX: CommandContext = { deviceId: '123456789012345', now: NOW, serial: 0 };
const encode = suntechProtocol.encodeCommand!;
const text = (b: Buffer): string => b.toString('latin1');

runEncoderVectors(suntechProtocol, {
  // rebootDevice, before the device has reported: the SA200 prefix
  60: { encode: () => encode('Reboot', CTX).bytes },
});

test('suntech.encoder: the command carries the model prefix the device reports with, and CR', (t) => {
  const { bytes, match } = encode('Enable1', {
    ...CTX,
    deviceId: '007238270',
    session: { 'suntech.prefix': 'ST300', 'suntech.universal': false },
  });
  t.is(text(bytes), 'ST300CMD;007238270;02;Enable1\r');
  t.deepEqual(match, {}, 'the answer echoes nothing');
});

test('suntech.encoder: a device speaking the universal format gets CMD without a prefix', (t) => {
  t.is(
    text(
      encode('StatusReq', {
        ...CTX,
        deviceId: '0560001616',
        session: { 'suntech.prefix': 'ST300', 'suntech.universal': true },
      }).bytes,
    ),
    'CMD;0560001616;02;StatusReq\r',
  );
});

test('suntech.encoder: CR and LF are refused, as is a device id with a separator', (t) => {
  t.is(t.throws(() => encode('Reboot\r', CTX), { instanceOf: CommandError })?.reason, 'DELIMITER');
  t.is(t.throws(() => encode('Re\nboot', CTX), { instanceOf: CommandError })?.reason, 'DELIMITER');
  t.is(
    t.throws(() => encode('Reboot', { ...CTX, deviceId: '12;34' }), { instanceOf: CommandError })?.reason,
    'DEVICE_ID',
  );
  t.is(t.throws(() => encode('x'.repeat(5000), CTX), { instanceOf: CommandError })?.reason, 'TOO_LONG');
});
