import test from 'ava';
import { protocols } from '../../protocols/index.js';
import { CommandError, type CommandContext } from '../../protocols/types.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const CTX: CommandContext = { deviceId: '123456789012345', now: NOW, serial: 1 };
const encoders = Object.values(protocols).filter((p) => p.encodeCommand);

test('protocols: every tracker protocol but OsmAnd encodes commands', (t) => {
  t.deepEqual(encoders.map((p) => p.name).sort(), [
    'gl200',
    'gps103',
    'gt06',
    'h02',
    'jt808',
    'meitrack',
    'ruptela',
    'suntech',
    'teltonika',
    'tk103',
    'totem',
    'watch',
    'xexun',
  ]);
  t.is(protocols.osmand.encodeCommand, undefined, 'the API answers COMMAND_UNSUPPORTED for it');
});

for (const p of encoders) {
  const encode = p.encodeCommand!;

  test(`${p.name}.encoder: the same command and context give the same bytes (no clock, no counter)`, (t) => {
    t.is(encode('STATUS,1', { ...CTX }).bytes.toString('hex'), encode('STATUS,1', { ...CTX }).bytes.toString('hex'));
  });

  test(`${p.name}.encoder: an empty or non-ASCII command is a CommandError naming the protocol and the reason`, (t) => {
    for (const [text, reason] of [
      ['', 'EMPTY'],
      ['STATUS\u0000', 'CHARSET'],
      ['STATUS €', 'CHARSET'],
    ] as const) {
      const e = t.throws(() => encode(text, CTX), { instanceOf: CommandError }, JSON.stringify(text));
      t.is(e?.reason, reason);
      t.is(e?.protocol, p.name);
      t.true(e?.message.startsWith(`${p.name}: `));
    }
  });

  // GPS103's splitter cuts device frames at `*`, which starts every server command; Xexun commands are
  // bare text, nothing like a device record: nothing to check there
  if (p.name !== 'gps103' && p.name !== 'xexun') {
    test(`${p.name}.encoder: the protocol's own splitter cuts a command as exactly one frame`, (t) => {
      const bytes = encode('STATUS,1', CTX).bytes;
      const splitter = p.createSplitter!();
      t.deepEqual(splitter.push(bytes).length, 1);
      t.is(splitter.buffered, 0, 'nothing left over');
    });
  }
}
