import test from 'ava';
import { xexunProtocol } from '../../../protocols/xexun/xexun.protocol.js';
import { CommandError, type CommandContext } from '../../../protocols/types.js';

// The reference has no encoder test for xexun; these check its two commands' form.
const encode = xexunProtocol.encodeCommand!;
const ctx = (): CommandContext => ({ deviceId: '123456789012345', now: new Date(Date.UTC(2026, 0, 2)), serial: 0 });

test('xexun.encoder: the engine commands go as their text, unframed', (t) => {
  t.is(encode('powercar123456 11', ctx()).bytes.toString('latin1'), 'powercar123456 11');
  t.is(encode('powercar123456 00', ctx()).bytes.toString('latin1'), 'powercar123456 00');
  t.deepEqual(encode('powercar123456 00', ctx()).match, {});
});

test('xexun.encoder: empty and control-character texts are refused', (t) => {
  t.is(t.throws(() => encode('', ctx()), { instanceOf: CommandError })?.reason, 'EMPTY');
  t.is(t.throws(() => encode('a\r\nb', ctx()), { instanceOf: CommandError })?.reason, 'CHARSET');
});
