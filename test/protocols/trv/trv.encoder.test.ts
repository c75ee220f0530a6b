import test from 'ava';
import { trvProtocol } from '../../../protocols/trv/trv.protocol.js';
import { CommandError, type CommandContext, type DecodeContext } from '../../../protocols/types.js';

// The reference has no TRV encoder and so no encoder vectors: these check the framing trackgate writes.
const CTX: CommandContext = { deviceId: '353456789012345', now: new Date(Date.UTC(2026, 0, 1)), serial: 1 };
const encode = (text: string, session?: Record<string, unknown>): string =>
  trvProtocol.encodeCommand!(text, { ...CTX, ...(session && { session }) }).bytes.toString('latin1');

test('trv.encoder: a text command goes as <vendor><text>#, IW until the watch has written its vendor', (t) => {
  t.is(encode('BP16'), 'IWBP16#');
  t.is(encode('BP33,080835,2'), 'IWBP33,080835,2#');
});

test('trv.encoder: the vendor the decoder kept in the session is used', (t) => {
  const session: Record<string, unknown> = {};
  const ctx: DecodeContext = { now: CTX.now, transport: 'tcp', checksum: 'accept', session };
  trvProtocol.decode!(Buffer.from('TRVAP00353456789012345'), ctx);
  t.is(encode('BP16', session), 'TRVBP16#');
});

test('trv.encoder: # ends a frame, so a text holding it is refused', (t) => {
  const e = t.throws(() => encode('BP16#'), { instanceOf: CommandError });
  t.is(e?.reason, 'DELIMITER');
});

test('trv.encoder: answers echo nothing, so the command matches nothing', (t) => {
  t.deepEqual(trvProtocol.encodeCommand!('BP16', CTX).match, {});
});
