import test from 'ava';
import { totemProtocol } from '../../../protocols/totem/totem.protocol.js';
import { CommandError, type CommandContext } from '../../../protocols/types.js';
import { runEncoderVectors } from '../../helpers/vector-runner.js';

const encode = totemProtocol.encodeCommand!;
const ctx = (): CommandContext => ({ deviceId: '123456789012345', now: new Date(Date.UTC(2026, 0, 2)), serial: 0 });

runEncoderVectors(totemProtocol, {
  // rebootDevice with password 000000: the text `000000,006`
  28: { encode: () => encode('000000,006', ctx()).bytes },
  29: {
    encode: () => encode('000000,006', ctx()).bytes,
    differs: {
      reason:
        "the SMS form `*<password>,<code>#` (TotemProtocolSmsEncoder): trackgate sends commands over the device's connection only, and has no SMS transport",
      instead: (t, bytes) => t.is(bytes().toString('latin1'), '$$0020CF000000,0061D', 'the TCP frame of the same text'),
    },
  },
});

test('totem.encoder: the length counts the whole frame; the XOR covers everything before it', (t) => {
  const { bytes, match } = encode('000000,025,C,1', ctx());
  t.is(bytes.toString('latin1'), '$$0024CF000000,025,C,1' + xorHex('$$0024CF000000,025,C,1'));
  t.is(bytes.length, 24);
  t.deepEqual(match, {});
});

test('totem.encoder: empty, non-ASCII, $$ inside and too long texts are refused', (t) => {
  const reason = (text: string) => t.throws(() => encode(text, ctx()), { instanceOf: CommandError })?.reason;
  t.is(reason(''), 'EMPTY');
  t.is(reason('000000,00é'), 'CHARSET');
  t.is(reason('000000,$$'), 'DELIMITER');
  t.is(reason('x'.repeat(9990)), 'TOO_LONG');
  t.is(encode('x'.repeat(9989), ctx()).bytes.length, 9999);
});

function xorHex(s: string): string {
  let x = 0;
  for (const c of Buffer.from(s, 'latin1')) x ^= c;
  return x.toString(16).toUpperCase().padStart(2, '0');
}
