import test from 'ava';
import { protocols } from '../../protocols/index.js';
import { CommandError, type CommandContext } from '../../protocols/types.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const CTX: CommandContext = { deviceId: '123456789012345', now: NOW, serial: 1 };
const encoders = Object.values(protocols).filter((p) => p.encodeCommand);
/**
 * A command each encoder takes. Most carry any text; Castel and MiniFinder2 carry only a few fixed
 * commands (docs/protocols/castel.md, minifinder2.md), so each is checked with one of them, and
 * Meiligao's Text is a hex command word (docs/protocols/meiligao.md).
 */
const SAMPLE_COMMAND: Readonly<Record<string, string>> = {
  castel: 'engineStop',
  meiligao: '4101',
  minifinder2: 'configuration',
};
const sampleFor = (name: string): string => SAMPLE_COMMAND[name] ?? 'STATUS,1';

/** Protocols whose trackers take no command over their connection, and why. */
const NO_COMMANDS: Record<string, string> = {
  osmand: 'an HTTP client (a phone app) that is never connected to: the API answers COMMAND_UNSUPPORTED',
  tlt2h: 'no command syntax over its TCP or UDP link is known (the reference has no encoder)',
  t55: 'plain NMEA sentences from many makers: no command syntax is common to them (the reference has no encoder)',
  flespi: 'an HTTP stream from the flespi platform, never connected to: commands go through flespi itself',
};

test('protocols: every tracker protocol encodes commands, but those listed with a reason', (t) => {
  const without = Object.values(protocols)
    .filter((p) => !p.encodeCommand)
    .map((p) => p.name)
    .sort();
  t.deepEqual(without, Object.keys(NO_COMMANDS).sort());
});

/**
 * Downlinks that are not the protocol's own uplink framing, so the protocol's splitter cannot cut
 * them: GPS103 device frames start at `*`, which starts every server command too; ATrack takes a
 * bare text line, while its device frames start `@P`, `FE 02` or `$`; Xexun takes bare text, while
 * its device sends RMC records.
 */
const DOWNLINK_NOT_UPLINK = new Set(['gps103', 'atrack', 'xexun']);

for (const p of encoders) {
  const encode = p.encodeCommand!;

  test(`${p.name}.encoder: the same command and context give the same bytes (no clock, no counter)`, (t) => {
    const text = sampleFor(p.name);
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

  if (!DOWNLINK_NOT_UPLINK.has(p.name)) {
    test(`${p.name}.encoder: the protocol's own splitter cuts a command as exactly one frame`, (t) => {
      const bytes = encode(sampleFor(p.name), CTX).bytes;
      const splitter = p.createSplitter!();
      t.deepEqual(splitter.push(bytes).length, 1);
      t.is(splitter.buffered, 0, 'nothing left over');
    });
  }
}
