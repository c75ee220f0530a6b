import test from 'ava';
import { atrackProtocol } from '../../../protocols/atrack/atrack.protocol.js';
import { CommandError, type CommandContext } from '../../../protocols/types.js';
import { runEncoderVectors } from '../../helpers/vector-runner.js';

const CTX: CommandContext = { deviceId: '123456789012345', now: new Date(Date.UTC(2026, 0, 2)), serial: 0 };
const encode = atrackProtocol.encodeCommand!;

// the captured frames hold no ATrack command: this registers none, and fails should one be added
runEncoderVectors(atrackProtocol, {});

test('atrack.encoder: a text command goes as the text and CR LF, as the reference writes a custom command', (t) => {
  const { bytes, match } = encode('AT$INFO=?', CTX);
  t.is(bytes.toString('latin1'), 'AT$INFO=?\r\n');
  t.deepEqual(match, {}, 'the $ answer echoes nothing');
});

test('atrack.encoder: CR, LF, control characters and empty texts are refused', (t) => {
  t.is(t.throws(() => encode('AT$REBOOT\r\nAT$X', CTX), { instanceOf: CommandError })?.reason, 'DELIMITER');
  t.is(t.throws(() => encode('AT\u0001', CTX), { instanceOf: CommandError })?.reason, 'CHARSET');
  t.is(t.throws(() => encode('', CTX), { instanceOf: CommandError })?.reason, 'EMPTY');
  t.is(t.throws(() => encode('A'.repeat(600), CTX), { instanceOf: CommandError })?.reason, 'TOO_LONG');
});
