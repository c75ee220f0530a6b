import test from 'ava';
import { castelProtocol } from '../../../protocols/castel/castel.protocol.js';
import { crc16X25 } from '../../../protocols/shared/crc.js';
import { CommandError, type CommandContext } from '../../../protocols/types.js';
import { runEncoderVectors } from '../../helpers/vector-runner.js';

const encode = castelProtocol.encodeCommand!;
const ctx = (o: Partial<CommandContext> = {}): CommandContext => ({
  deviceId: '123456789012345',
  now: new Date(Date.UTC(2026, 11, 2)),
  serial: 0,
  ...o,
});

runEncoderVectors(castelProtocol, {
  // Traccar's engineStop: CC petrol control 0x4583 with 01, version 1, the harness device's id
  36: { encode: () => encode('engineStop', ctx()).bytes },
});

test('castel.encoder: engineResume is petrol control 0x4583 with 00, byte for byte', (t) => {
  const { bytes, match } = encode('engineResume', ctx());
  t.is(bytes.toString('hex'), '40402000013132333435363738393031323334350000000000458300205b0d0a');
  t.deepEqual(match, {});
});

test('castel.encoder: the command word is case-insensitive and the id is NUL-padded to 20 bytes', (t) => {
  const { bytes } = encode(' ENGINESTOP ', ctx({ deviceId: '213GDS2021000052' }));
  t.is(bytes.readUInt16LE(2), bytes.length);
  t.is(bytes[4], 1, 'version 1');
  t.is(bytes.toString('latin1', 5, 25), '213GDS2021000052\0\0\0\0');
  t.is(bytes.readUInt16BE(25), 0x4583);
  t.is(bytes[27], 1);
  t.is(bytes.readUInt16LE(28), crc16X25(bytes, 0, 28));
  t.is(bytes.toString('hex', 30), '0d0a');
  // the gateway's own splitter and decoder take it as a frame naming the device
  t.deepEqual(castelProtocol.createSplitter!().push(bytes).length, 1);
  const r = castelProtocol.decode!(bytes, { now: new Date(), transport: 'tcp', checksum: 'strict', session: {} });
  t.is(r.identity, '213GDS2021000052');
});

test('castel.encoder: other texts, an empty text and an id the frame cannot hold are refused', (t) => {
  t.is(t.throws(() => encode('', ctx()), { instanceOf: CommandError })?.reason, 'EMPTY');
  const other = t.throws(() => encode('reboot', ctx()), { instanceOf: CommandError });
  t.is(other?.reason, 'UNKNOWN_COMMAND');
  t.regex(other?.message ?? '', /engineStop and engineResume.*Hex/);
  t.is(
    t.throws(() => encode('engineStop', ctx({ deviceId: '1'.repeat(21) })), { instanceOf: CommandError })?.reason,
    'DEVICE_ID',
  );
  t.is(t.throws(() => encode('engineStop', ctx({ deviceId: '' })), { instanceOf: CommandError })?.reason, 'DEVICE_ID');
});
