import test from 'ava';
import { protocols } from '../../protocols/index.js';
import { CommandError, type CommandContext } from '../../protocols/types.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const CTX: CommandContext = { deviceId: '123456789012345', now: NOW, serial: 1 };
const encoders = Object.values(protocols).filter((p) => p.encodeCommand);
/** a command each protocol carries; `STATUS,1` unless its Text has a form of its own (Meiligao: a hex command word) */
const SAMPLE: Readonly<Record<string, string>> = { meiligao: '4101' };
const sample = (name: string): string => SAMPLE[name] ?? 'STATUS,1';

test('protocols: every tracker protocol but OsmAnd encodes commands', (t) => {
  t.deepEqual(encoders.map((p) => p.name).sort(), [
    'eelink',
    'gl200',
    'gps103',
    'gt06',
    'h02',
    'jt808',
    'meiligao',
    'meitrack',
    'ruptela',
    'suntech',
    'teltonika',
    'tk103',
    'watch',
  ]);
  t.is(protocols.osmand.encodeCommand, undefined, 'the API answers COMMAND_UNSUPPORTED for it');
});

for (const p of encoders) {
  const encode = p.encodeCommand!;

  test(`${p.name}.encoder: the same command and context give the same bytes (no clock, no counter)`, (t) => {
    const text = sample(p.name);
    t.is(encode(text, { ...CTX }).bytes.toString('hex'), encode(text, { ...CTX }).bytes.toString('hex'));
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

  // GPS103's splitter cuts device frames at `*`, which starts every server command: nothing to check there
  if (p.name !== 'gps103') {
    test(`${p.name}.encoder: the protocol's own splitter cuts a command as exactly one frame`, (t) => {
      const bytes = encode(sample(p.name), CTX).bytes;
      const splitter = p.createSplitter!();
      t.deepEqual(splitter.push(bytes).length, 1);
      t.is(splitter.buffered, 0, 'nothing left over');
    });
  }
}
