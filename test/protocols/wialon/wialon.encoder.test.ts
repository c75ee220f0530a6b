import test from 'ava';
import { wialonProtocol } from '../../../protocols/wialon/wialon.protocol.js';
import { CommandError, type CommandContext } from '../../../protocols/types.js';

const encode = wialonProtocol.encodeCommand!;
const ctx: CommandContext = { deviceId: '123456789012345', now: new Date(Date.UTC(2026, 0, 2)), serial: 0 };

test("wialon.encoder: a text command is the text and CR LF, as Traccar's encoder writes reboot, VER?, USSD and L<n>", (t) => {
  for (const text of ['reboot', 'VER?', 'USSD:*100#', 'L1=1']) {
    const { bytes, match } = encode(text, ctx);
    t.is(bytes.toString('latin1'), `${text}\r\n`);
    t.deepEqual(match, {});
  }
});

test('wialon.encoder: CR or LF in the text is refused as a line end; empty and non-ASCII too', (t) => {
  t.is(t.throws(() => encode('reboot\r\n', ctx), { instanceOf: CommandError })?.reason, 'DELIMITER');
  t.is(t.throws(() => encode('', ctx), { instanceOf: CommandError })?.reason, 'EMPTY');
  t.is(t.throws(() => encode('VER?°', ctx), { instanceOf: CommandError })?.reason, 'CHARSET');
});
