import test from 'ava';
import { meiligaoFrame } from '../../../protocols/meiligao/meiligao.encoder.js';
import { meiligaoProtocol } from '../../../protocols/meiligao/meiligao.protocol.js';
import { CommandError, type CommandContext } from '../../../protocols/types.js';
import { runEncoderVectors } from '../../helpers/vector-runner.js';

// Traccar's test device has the unique id 123456789012345: its first 14 digits are the id bytes
const CTX: CommandContext = { deviceId: '123456789012345', now: new Date(Date.UTC(2026, 0, 2)), serial: 0 };
const encode = (text: string): Buffer => meiligaoProtocol.encodeCommand!(text, CTX).bytes;

// Traccar's command types as the Text commands that carry them (the test reuses one Command, so
// later vectors still hold `frequency` and `timezone`; only each type's own attribute is written)
runEncoderVectors(meiligaoProtocol, {
  // positionSingle: track on demand 0x4101, no data
  32: { encode: () => encode('4101') },
  // positionPeriodic, frequency 100 s: 0x4102, u16 interval in tens of seconds
  33: { encode: () => encode('4102#000a') },
  // setTimezone GMT+8: 0x4132, the offset in minutes as ASCII
  34: { encode: () => encode('4132,480') },
  // rebootDevice: 0x4902
  35: { encode: () => encode('4902') },
  // alarmGeofence, radius 1000 m: movement alarm 0x4106, u16 radius
  36: { encode: () => encode('4106#03e8') },
  // engineStop on a model with one output: 0x4115, output 1 on
  37: { encode: () => encode('4115#01') },
});

test('meiligao.encoder: a command is an "@@" frame with the id, the command word, the data and the CRC', (t) => {
  const { bytes, match } = meiligaoProtocol.encodeCommand!('4151', CTX);
  t.is(
    bytes.toString('hex'),
    meiligaoFrame(Buffer.from('12345678901234', 'hex'), 0x4151, Buffer.alloc(0)).toString('hex'),
  );
  t.is(bytes.readUInt16BE(2), bytes.length);
  t.deepEqual(match, {});
  t.is(encode('4115#0102020202').subarray(13, 18).toString('hex'), '0102020202', 'five outputs (TK510 and kin)');
});

test('meiligao.encoder: a short id is padded with F', (t) => {
  const bytes = meiligaoProtocol.encodeCommand!('4101', { ...CTX, deviceId: '1234' }).bytes;
  t.is(bytes.subarray(4, 11).toString('hex'), '1234ffffffffff');
});

test('meiligao.encoder: texts that are no command word, odd hex, control characters and bad ids are refused', (t) => {
  const reason = (text: string, c = CTX) =>
    t.throws(() => meiligaoProtocol.encodeCommand!(text, c), { instanceOf: CommandError })?.reason;
  t.is(reason(''), 'EMPTY');
  t.is(reason('RELAY,1'), 'CHARSET');
  t.is(reason('4102#00a'), 'CHARSET');
  t.is(reason('4132,a\rb'), 'CHARSET');
  t.is(reason('4101', { ...CTX, deviceId: 'abc' }), 'DEVICE_ID');
});
