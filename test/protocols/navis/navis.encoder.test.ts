import test from 'ava';
import { navisProtocol } from '../../../protocols/navis/navis.protocol.js';
import { CommandError, type CommandContext } from '../../../protocols/types.js';
import { runEncoderVectors } from '../../helpers/vector-runner.js';

const CTX: CommandContext = { deviceId: '123456789012345', now: new Date(Date.UTC(2026, 0, 2)), serial: 0 };
const encode = navisProtocol.encodeCommand!;

runEncoderVectors(navisProtocol, {
  // Traccar NavisProtocolEncoderTest: custom `*!SETOUT 1Y`
  18: { encode: () => encode('*!SETOUT 1Y', CTX).bytes },
});

test('navis.encoder: a command is the body of an NTCB frame to receiver 0 from sender 1, with both XORs', (t) => {
  const { bytes, match } = encode('*?V', CTX);
  t.is(bytes.subarray(0, 4).toString('latin1'), '@NTC');
  t.is(bytes.readUInt32LE(4), 0);
  t.is(bytes.readUInt32LE(8), 1);
  t.is(bytes.readUInt16LE(12), 3);
  t.is(bytes[14], 0x2a ^ 0x3f ^ 0x56);
  let x = 0;
  for (const b of bytes.subarray(0, 15)) x ^= b;
  t.is(bytes[15], x);
  t.is(bytes.subarray(16).toString('latin1'), '*?V');
  t.deepEqual(match, {}, 'the *@C answer echoes nothing');
});

test('navis.encoder: an empty, non-ASCII or over-long command is refused', (t) => {
  t.is(t.throws(() => encode('', CTX), { instanceOf: CommandError })?.reason, 'EMPTY');
  t.is(t.throws(() => encode('*!é', CTX), { instanceOf: CommandError })?.reason, 'CHARSET');
  t.is(t.throws(() => encode('x'.repeat(70_000), CTX), { instanceOf: CommandError })?.reason, 'TOO_LONG');
});
