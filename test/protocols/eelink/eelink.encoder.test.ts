import test from 'ava';
import { envelope, envelopeChecksum } from '../../../protocols/eelink/eelink.encoder.js';
import { eelinkProtocol } from '../../../protocols/eelink/eelink.protocol.js';
import { CommandError, type CommandContext } from '../../../protocols/types.js';
import { runEncoderVectors } from '../../helpers/vector-runner.js';

const TCP: CommandContext = { deviceId: '123456789012345', now: new Date(Date.UTC(2026, 0, 2)), serial: 0 };
// a device heard over UDP: the decoder left the envelope's IMEI in the sender's session
const UDP: CommandContext = { ...TCP, session: { 'eelink.envelopeImei': '123456789012345' } };
const encode = eelinkProtocol.encodeCommand!;

runEncoderVectors(eelinkProtocol, {
  // engineStop is Traccar's RELAY,1# text
  25: { encode: () => encode('RELAY,1#', TCP).bytes },
  // the same to a UDP device, in an "EL" envelope with IMEI 0123456789012345
  26: { encode: () => encode('RELAY,1#', UDP).bytes },
});

test('eelink.encoder: a text command is a downlink packet 0x80, index 0, kind 1, server id 0', (t) => {
  const { bytes, match } = encode('WHERE#', TCP);
  t.is(bytes.toString('hex'), '676780000d00000100000000574845524523');
  t.is(bytes.subarray(12).toString('latin1'), 'WHERE#');
  t.deepEqual(match, {});
});

test('eelink.encoder: the envelope checksum covers the IMEI and the packet', (t) => {
  const bytes = encode('RESET#', UDP).bytes;
  t.is(bytes.subarray(0, 2).toString('latin1'), 'EL');
  t.is(bytes.readUInt16BE(2), bytes.length - 4);
  t.is(bytes.readUInt16BE(4), envelopeChecksum(bytes, 6));
  t.deepEqual(bytes, envelope('123456789012345', encode('RESET#', TCP).bytes));
});

test('eelink.encoder: empty texts, control characters and bad ids are refused', (t) => {
  const reason = (text: string, c = TCP) => t.throws(() => encode(text, c), { instanceOf: CommandError })?.reason;
  t.is(reason(''), 'EMPTY');
  t.is(reason('RELAY\n1#'), 'CHARSET');
  t.is(reason('WHERE#', { ...TCP, deviceId: 'abc' }), 'DEVICE_ID');
});
