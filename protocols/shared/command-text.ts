import { CommandError } from '../types.js';

/** What a protocol's command framing lets a text hold. */
export interface TextRules {
  /** characters that end or split the protocol's frames (H02 `#`, GPS103 `;`) */
  delimiters: readonly string[];
  /** the most bytes the framing or the device takes */
  maxBytes: number;
}

const describe = (c: string): string => (c === '\r' ? 'CR' : c === '\n' ? 'LF' : `"${c}"`);

/**
 * The checks every encoder makes, in the order a person fixes them: empty, a frame delimiter, a
 * character outside printable ASCII (trackers take commands as ASCII, docs/protocols.md §5), too long.
 * Returns the text's bytes.
 */
export function commandBytes(protocol: string, text: string, rules: TextRules): Buffer {
  if (text.length === 0) throw new CommandError(protocol, 'EMPTY', 'the command is empty');
  const delimiter = rules.delimiters.find((d) => text.includes(d));
  if (delimiter !== undefined) {
    throw new CommandError(
      protocol,
      'DELIMITER',
      `the command holds ${describe(delimiter)}, which delimits ${protocol} frames`,
    );
  }
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code > 0x7e) {
      throw new CommandError(
        protocol,
        'CHARSET',
        `the command holds U+${code.toString(16).padStart(4, '0').toUpperCase()} at ${i}: ${protocol} commands are printable ASCII`,
      );
    }
  }
  if (text.length > rules.maxBytes) {
    throw new CommandError(
      protocol,
      'TOO_LONG',
      `the command is ${text.length} bytes; ${protocol} takes at most ${rules.maxBytes}`,
    );
  }
  return Buffer.from(text, 'latin1');
}

/** A counter the caller keeps: out of range is the caller's bug, not the command's. */
export function checkUint(name: string, value: number, max: number): number {
  if (!Number.isInteger(value) || value < 0 || value > max)
    throw new RangeError(`${name} ${value} is not an integer 0-${max}`);
  return value;
}
