import test from 'ava';
import { ruptelaProtocol } from '../../../protocols/ruptela/ruptela.protocol.js';
import { ruptelaPacket } from '../../../protocols/ruptela/ruptela.encoder.js';
import { crc16Kermit } from '../../../protocols/shared/crc.js';
import { CommandError, type CommandContext } from '../../../protocols/types.js';
import { runEncoderVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const CTX: CommandContext = { deviceId: '123456789012345', now: NOW, serial: 0 };
const encode = ruptelaProtocol.encodeCommand!;

runEncoderVectors(ruptelaProtocol, {
  // Traccar's photo request (files, command 37 + 100): sub-command 1, source 0, from 0 to 2^31-1.
  // trackgate's Text goes as SMS via GPRS, so this vector checks the same packet framing
  10: { encode: () => ruptelaPacket(37, Buffer.from('0100000000007fffffff', 'hex')) },
});

test('ruptela.encoder: a text command is an SMS-via-GPRS packet 0x6C with its length and CRC-16/KERMIT', (t) => {
  const { bytes, match } = encode('getver', CTX);
  t.is(
    bytes.toString('hex'),
    `0007 6c ${Buffer.from('getver').toString('hex')} ${crc16Kermit(bytes, 2, 9).toString(16).padStart(4, '0')}`.replace(
      / /g,
      '',
    ),
  );
  t.is(bytes.readUInt16BE(0), 7, 'command byte and text');
  t.is(bytes[2], 0x6c);
  t.deepEqual(match, {}, 'the answer echoes nothing');
});

test('ruptela.encoder: the identification answer is 00027301cb25, as the CRC catalogue check confirms', (t) => {
  t.is(ruptelaPacket(15, Buffer.from([1])).toString('hex'), '00027301cb25');
  t.is(crc16Kermit(Buffer.from('123456789')), 0x2189, 'CRC-16/KERMIT check value');
});

test('ruptela.encoder: a bad device id and an over-long text are refused', (t) => {
  t.is(
    t.throws(() => encode('getver', { ...CTX, deviceId: 'abc' }), { instanceOf: CommandError })?.reason,
    'DEVICE_ID',
  );
  t.is(t.throws(() => encode('x'.repeat(3000), CTX), { instanceOf: CommandError })?.reason, 'TOO_LONG');
});
