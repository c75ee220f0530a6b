import test from 'ava';
import { watchProtocol } from '../../../protocols/watch/watch.protocol.js';
import { CommandError, type CommandContext } from '../../../protocols/types.js';
import { runEncoderVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const CTX: CommandContext = { deviceId: '123456789012345', now: NOW, serial: 0 };
const encode = watchProtocol.encodeCommand!;
const text = (b: Buffer): string => b.toString('latin1');

// Traccar's encoder test runs without a decoder in the pipeline: maker CS, no index, as ours without a session
runEncoderVectors(watchProtocol, {
  46: { encode: () => encode('RESET', CTX).bytes },
  47: { encode: () => encode('SOS1,123456789', CTX).bytes },
  48: {
    encode: () => encode('TK,#!AMR\n%s', CTX).bytes,
    differs: {
      reason: 'a voice message is binary AMR data; a Text command is printable ASCII',
      instead: (t, bytes) => t.is(t.throws(bytes, { instanceOf: CommandError })?.reason, 'CHARSET'),
    },
  },
  49: {
    encode: () => encode('TK,}[],*', CTX).bytes,
    differs: {
      reason: 'a voice message is binary AMR data, escaped; a Text command may not hold [ ] }',
      instead: (t, bytes) => t.is(t.throws(bytes, { instanceOf: CommandError })?.reason, 'DELIMITER'),
    },
  },
  50: { encode: () => encode('MESSAGE,0074006500780074', CTX).bytes },
  51: { encode: () => encode('WORK,6-9,11-13,13-15,17-19', CTX).bytes },
  52: { encode: () => encode('LZ,,-1', CTX).bytes },
  53: { encode: () => encode('LZ,,-11.5', CTX).bytes },
  54: { encode: () => encode('LZ,0,+5.75', CTX).bytes },
});

test('watch.encoder: the command goes with the maker the watch used, its length in 4 lowercase hex digits', (t) => {
  const { bytes, match } = encode('CR', {
    ...CTX,
    deviceId: '8800000015',
    session: { 'watch.maker': 'SG', 'watch.indexed': false },
  });
  t.is(text(bytes), '[SG*8800000015*0002*CR]');
  t.deepEqual(match, { command: 'CR' });
  t.is(
    text(encode('UPLOAD,600', { ...CTX, session: { 'watch.maker': '3G' } }).bytes),
    '[3G*123456789012345*000a*UPLOAD,600]',
  );
  t.deepEqual(
    encode('UPLOAD,600', CTX).match,
    { command: 'UPLOAD' },
    'the word before the first comma is what the watch echoes',
  );
});

test('watch.encoder: a watch whose frames carry an index gets one (0001) in the command', (t) => {
  t.is(
    text(encode('POWEROFF', { ...CTX, session: { 'watch.maker': 'ZJ', 'watch.indexed': true } }).bytes),
    '[ZJ*123456789012345*0001*0008*POWEROFF]',
  );
});

test("watch.encoder: the watch's own splitter and decoder read the command back", (t) => {
  const bytes = encode('FACTORY', { ...CTX, session: { 'watch.maker': 'SG' } }).bytes;
  const [frame] = watchProtocol.createSplitter!().push(bytes);
  const r = watchProtocol.decode!(frame, { now: NOW, transport: 'tcp', checksum: 'accept', session: {} });
  t.deepEqual(r.commandResults, [{ text: 'FACTORY', command: 'FACTORY' }]);
});

test('watch.encoder: [ ] and } are refused, as are an empty command word and a bad device id', (t) => {
  for (const bad of ['CR]', '[CR', 'TK,}1'])
    t.is(t.throws(() => encode(bad, CTX), { instanceOf: CommandError })?.reason, 'DELIMITER', bad);
  t.is(t.throws(() => encode(',1', CTX), { instanceOf: CommandError })?.reason, 'EMPTY');
  t.is(t.throws(() => encode('CR', { ...CTX, deviceId: 'a*b' }), { instanceOf: CommandError })?.reason, 'DEVICE_ID');
  t.is(t.throws(() => encode('x'.repeat(70_000), CTX), { instanceOf: CommandError })?.reason, 'TOO_LONG');
});
