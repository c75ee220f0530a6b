import test from 'ava';
import { laipacProtocol } from '../../../protocols/laipac/laipac.protocol.js';
import { CommandError, type CommandContext } from '../../../protocols/types.js';

const encode = laipacProtocol.encodeCommand!;
const ctx: CommandContext = { deviceId: '123456789012345', now: new Date(Date.UTC(2026, 0, 2)), serial: 0 };

test('laipac.encoder: a text command is a $ sentence with its XOR and CR LF', (t) => {
  // as Traccar's encoder writes positionSingle and rebootDevice with the default password
  t.is(encode('AVREQ,00000000,1', ctx).bytes.toString('latin1'), '$AVREQ,00000000,1*60\r\n');
  t.is(
    encode('AVRESET,123456789012345,00000000', ctx).bytes.toString('latin1'),
    '$AVRESET,123456789012345,00000000*72\r\n',
  );
  t.deepEqual(encode('AVREQ,00000000,1', ctx).match, {});
});

test("laipac.encoder: a leading $ is the sentence's own", (t) => {
  t.is(encode('$AVREQ,00000000,1', ctx).bytes.toString('latin1'), '$AVREQ,00000000,1*60\r\n');
});

test('laipac.encoder: *, $, CR or LF in the text is refused; empty and non-ASCII too', (t) => {
  for (const text of ['AVREQ*00', 'AVREQ\r\n', 'AV$REQ']) {
    t.is(t.throws(() => encode(text, ctx), { instanceOf: CommandError })?.reason, 'DELIMITER', text);
  }
  t.is(t.throws(() => encode('', ctx), { instanceOf: CommandError })?.reason, 'EMPTY');
  t.is(t.throws(() => encode('AVREQ°', ctx), { instanceOf: CommandError })?.reason, 'CHARSET');
});
