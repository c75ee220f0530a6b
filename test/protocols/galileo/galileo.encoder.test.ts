import test from 'ava';
import { galileoCommandPacket } from '../../../protocols/galileo/galileo.encoder.js';
import { galileoProtocol } from '../../../protocols/galileo/galileo.protocol.js';
import { crc16Modbus } from '../../../protocols/shared/crc.js';
import { CommandError, type CommandContext } from '../../../protocols/types.js';
import { runEncoderVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const CTX: CommandContext = { deviceId: '123456789012345', now: NOW, serial: 0 };
const encode = galileoProtocol.encodeCommand!;

runEncoderVectors(galileoProtocol, {
  // Traccar's custom command with data "status" is trackgate's Text "status"
  12: { encode: () => encode('status', CTX).bytes },
});

test('galileo.encoder: a text command is a packet of tags 03, 04, E0, E1 closed by CRC-16/MODBUS', (t) => {
  const { bytes, match } = encode('Out 0,1', CTX);
  t.is(bytes[0], 0x01);
  t.is(bytes.readUInt16LE(1), bytes.length - 5);
  t.is(bytes.subarray(3, 19).toString('latin1'), '\x03123456789012345');
  t.is(bytes.subarray(19, 28).toString('hex'), '040000e000000000e1');
  t.is(bytes[28], 7);
  t.is(bytes.subarray(29, 36).toString('latin1'), 'Out 0,1');
  t.is(bytes.readUInt16LE(36), crc16Modbus(bytes, 0, 36));
  t.deepEqual(match, {}, 'the answer echoes nothing');
  t.deepEqual(encode('Out 0,1', CTX).bytes, galileoCommandPacket('123456789012345', Buffer.from('Out 0,1')));
});

test('galileo.encoder: CRC-16/MODBUS has its catalogue check value', (t) => {
  t.is(crc16Modbus(Buffer.from('123456789')), 0x4b37);
});

test('galileo.encoder: a device id that is no 15-digit IMEI, an empty or an over-long text are refused', (t) => {
  const reason = (text: string, deviceId = CTX.deviceId) =>
    t.throws(() => encode(text, { ...CTX, deviceId }), { instanceOf: CommandError })?.reason;
  t.is(reason('status', '12345'), 'DEVICE_ID');
  t.is(reason(''), 'EMPTY');
  t.is(reason('x'.repeat(256)), 'TOO_LONG');
  t.is(reason('st\u00e4tus'), 'CHARSET');
  t.is(encode('x'.repeat(255), CTX).bytes.length, 3 + 26 + 255 + 2);
});
