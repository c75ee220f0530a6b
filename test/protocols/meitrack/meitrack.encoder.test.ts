import test from 'ava';
import { meitrackProtocol } from '../../../protocols/meitrack/meitrack.protocol.js';
import { CommandError, type CommandContext } from '../../../protocols/types.js';
import { runEncoderVectors } from '../../helpers/vector-runner.js';
import { sum8 } from '../../helpers/meitrack-frames.js';

const IMEI = '123456789012345';
const encode = meitrackProtocol.encodeCommand!;
const ctx = (o: Partial<CommandContext> = {}): CommandContext => ({
  deviceId: IMEI,
  now: new Date(Date.UTC(2026, 0, 2)),
  serial: 0,
  ...o,
});

// Traccar's requestPhoto and sendSms commands, as the Text they are sent as (serial 0 is data identifier `A`)
runEncoderVectors(meitrackProtocol, {
  38: { encode: () => encode('D03,1,camera_picture.jpg', ctx()).bytes },
  39: { encode: () => encode('C02,0,15360853789,Meitrack', ctx()).bytes },
});

test('meitrack.encoder: a text command is @@<flag><len>,<imei>,<text>*<sum>\\r\\n, matched by flag and command word', (t) => {
  const { bytes, match } = encode('C01,0,12222', ctx({ serial: 12 }));
  const head = `@@M33,${IMEI},C01,0,12222*`;
  t.is(bytes.toString('latin1'), `${head}${sum8(Buffer.from(head))}\r\n`);
  t.is(bytes.length - bytes.indexOf(','), 33, 'the length counts from the first comma through CR LF');
  t.deepEqual(match, { command: 'C01', flag: 'M' });
});

test('meitrack.encoder: the data identifier runs A..z with the serial and wraps', (t) => {
  const flag = (serial: number) => encode('A10', ctx({ serial })).match.flag;
  t.deepEqual([0, 1, 25, 57, 58].map(flag), ['A', 'B', 'Z', 'z', 'A']);
});

test('meitrack.encoder: "*", CR or LF in the text is refused as a delimiter', (t) => {
  for (const text of ['A10*', 'A10\r', 'C01,0\n12222']) {
    const e = t.throws(() => encode(text, ctx()), { instanceOf: CommandError });
    t.is(e?.reason, 'DELIMITER', JSON.stringify(text));
  }
});

test('meitrack.encoder: over 1,024 bytes, an empty command word, or an id that is not digits is refused', (t) => {
  t.is(encode('C02,' + 'x'.repeat(1020), ctx()).bytes.length > 1024, true);
  t.is(t.throws(() => encode('C02,' + 'x'.repeat(1021), ctx()), { instanceOf: CommandError })?.reason, 'TOO_LONG');
  t.is(t.throws(() => encode(',1', ctx()), { instanceOf: CommandError })?.reason, 'EMPTY');
  t.is(t.throws(() => encode('A10', ctx({ deviceId: 'abc' })), { instanceOf: CommandError })?.reason, 'DEVICE_ID');
});
