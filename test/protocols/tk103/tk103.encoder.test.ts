import test, { type ExecutionContext } from 'ava';
import { tk103Protocol } from '../../../protocols/tk103/tk103.protocol.js';
import { CommandError, type CommandContext } from '../../../protocols/types.js';
import { runEncoderVectors } from '../../helpers/vector-runner.js';

const IMEI = '123456789012345';
const encode = tk103Protocol.encodeCommand!;
const ctx = (o: Partial<CommandContext> = {}): CommandContext => ({
  deviceId: IMEI,
  now: new Date(Date.UTC(2026, 0, 2)),
  serial: 0,
  ...o,
});
const ALTERNATIVE =
  "Traccar's alternative `[begin]sms2,…,[end]` framing, chosen by its per-device `tk103.alternative` setting (the encoder built with forceAlternative); trackgate has no counterpart";
/** trackgate writes the text in the standard framing instead: `(<id><text>)` */
const standard = (text: string) => ({
  reason: ALTERNATIVE,
  instead: (t: ExecutionContext, bytes: () => Buffer) => t.is(bytes().toString('latin1'), `(${IMEI}${text})`),
});

runEncoderVectors(tk103Protocol, {
  57: { encode: () => encode('AV001', ctx()).bytes },
  58: { encode: () => encode('AR00003C0000', ctx()).bytes },
  59: { encode: () => encode('AR0000000000', ctx()).bytes },
  60: { encode: () => encode('AT00', ctx()).bytes },
  61: { encode: () => encode('AX01', ctx()).bytes },
  62: { encode: () => encode('*getposl*', ctx()).bytes, differs: standard('*getposl*') },
  63: { encode: () => encode('*about*', ctx()).bytes, differs: standard('*about*') },
  64: { encode: () => encode('999999', ctx()).bytes, differs: standard('999999') },
  65: { encode: () => encode('*sosoff*', ctx()).bytes, differs: standard('*sosoff*') },
  66: { encode: () => encode('any text is ok', ctx()).bytes, differs: standard('any text is ok') },
  67: { encode: () => encode('*setip*1*2*3*4*5555*', ctx()).bytes, differs: standard('*setip*1*2*3*4*5555*') },
});

test('tk103.encoder: a text command is (<id><text>), with nothing to match', (t) => {
  const { bytes, match } = encode('AV010', ctx({ deviceId: '013612345678' }));
  t.is(bytes.toString('latin1'), '(013612345678AV010)');
  t.deepEqual(match, {});
});

test('tk103.encoder: ( or ) in the text is refused as a frame delimiter', (t) => {
  for (const text of ['AV00(1', 'AV001)', '(AT00)']) {
    const e = t.throws(() => encode(text, ctx()), { instanceOf: CommandError });
    t.is(e?.reason, 'DELIMITER', JSON.stringify(text));
    t.is(e?.protocol, 'tk103');
  }
});

test('tk103.encoder: the frame stays within the 1,024 bytes of a TK103 frame; an id with other characters is refused', (t) => {
  t.is(encode('x'.repeat(1024 - 17), ctx()).bytes.length, 1024);
  t.is(t.throws(() => encode('x'.repeat(1024 - 16), ctx()), { instanceOf: CommandError })?.reason, 'TOO_LONG');
  t.is(t.throws(() => encode('AT00', ctx({ deviceId: '01)(' })), { instanceOf: CommandError })?.reason, 'DEVICE_ID');
});
