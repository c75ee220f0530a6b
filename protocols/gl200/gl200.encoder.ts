import { commandBytes } from '../shared/command-text.js';
import type { CommandContext, CommandMatch, EncodedCommand } from '../types.js';
import { PROTOCOL } from './gl200.constants.js';

/**
 * The longest command written, `$` included: a bound of ours (the longest @Track commands, geofence
 * polygons, stay well below it), so an operator's slip cannot flood the device's input buffer.
 */
export const GL200_MAX_COMMAND_BYTES = 1024;

const COMMAND_WORD = /^AT\+(GT[A-Z]{3})=/i;
const SERIAL = /^[0-9a-fA-F]{4}$/;

/**
 * A Text command as the operator writes it, `AT+GT<xxx>=<password>,<parameters>,<serial hex4>`
 * (the @Track command format, docs/protocols.md §3.6), ended with `$` (a trailing `$` in the text is
 * taken as that end; any other `$` would end the command early and is refused). The device answers
 * `+ACK:GT<xxx>,<version>,<imei>,<name>,...,<serial>,<send time>,<count>$`: the answer is tied
 * back by the command word and, when the command ends in a 4-digit hex serial, that serial. A text
 * that is no `AT+GT` command is still written as given, with nothing to match (the next answer is
 * its answer).
 */
export function encodeGl200Command(text: string, _ctx: CommandContext): EncodedCommand {
  const body = text.endsWith('$') ? text.slice(0, -1) : text;
  commandBytes(PROTOCOL, body, { delimiters: ['$'], maxBytes: GL200_MAX_COMMAND_BYTES - 1 });
  const match: CommandMatch = {};
  const word = COMMAND_WORD.exec(body)?.[1];
  if (word) {
    match.command = word.toUpperCase();
    const serial = body.split(',').at(-1) ?? '';
    if (body.includes(',') && SERIAL.test(serial)) match.replySerial = parseInt(serial, 16);
  }
  return { bytes: Buffer.from(`${body}$`, 'latin1'), match };
}
