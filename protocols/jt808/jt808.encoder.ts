import { checkUint, commandBytes } from '../shared/command-text.js';
import { CommandError, type CommandContext, type EncodedCommand } from '../types.js';
import { ATTR_BODY_LENGTH_MASK, DELIMITER, MSG, SESSION_VERSION } from './jt808.constants.js';
import { formatMessage } from './jt808.replies.js';

const PROTOCOL = 'jt808';

/** 8.27 table 38 text flag: bit 0 urgent, as Traccar writes it (bit 2 display, bit 3 TTS) */
const TEXT_FLAG_URGENT = 0x01;
/** JT/T 808-2019 adds a text type byte after the flag: 1 notice, 2 service */
const TEXT_TYPE_NOTICE = 0x01;
/** Jimi models take text commands as 8.61 downlink pass-through of this type (Traccar's JC371 encoder test) */
const PASSTHROUGH_TEXT_MODELS = new Set(['JC371']);
const PASSTHROUGH_TYPE_TEXT = 0xf0;

/** 4.4 terminal id digits: 6 BCD bytes, 10 in 2019 */
const BCD_DIGITS = 12;
const BCD_DIGITS_2019 = 20;

/**
 * The terminal id bytes of the device's id (any of the forms the decoder names it by: with or
 * without its leading zeros): zero-padded BCD (20 digits when the terminal speaks 2019); an IMEI too
 * long for 12 BCD digits goes as the 6-byte binary number of its digits without the last (Luhn)
 * one, as Traccar's `encodeId` writes it.
 */
export function terminalIdBytes(deviceId: string, version: number | undefined): Buffer {
  const digits = version === undefined ? BCD_DIGITS : BCD_DIGITS_2019;
  if (!/^\d+$/.test(deviceId))
    throw new CommandError(PROTOCOL, 'DEVICE_ID', `device id "${deviceId}" is not a terminal number`);
  if (deviceId.length <= digits) return Buffer.from(deviceId.padStart(digits, '0'), 'hex');
  const imei = Number(deviceId.slice(0, -1));
  if (version === undefined && deviceId.length <= 16 && imei <= 0xffffffffffff) {
    const id = Buffer.alloc(6);
    id.writeUIntBE(imei, 0, 6);
    return id;
  }
  throw new CommandError(
    PROTOCOL,
    'DEVICE_ID',
    `device id "${deviceId}" does not fit a ${digits}-digit terminal number`,
  );
}

/** the 2019 version byte the decoder kept for this connection, if the terminal speaks 2019 */
function versionOf(ctx: CommandContext): number | undefined {
  const version = ctx.session?.[SESSION_VERSION];
  return typeof version === 'number' ? version : undefined;
}

/** a platform message with the connection's serial; the terminal's 0x0001 answers serial and id */
function platformMessage(type: number, body: Buffer, ctx: CommandContext): EncodedCommand {
  const serial = checkUint('jt808 serial', ctx.serial, 0xffff);
  const version = versionOf(ctx);
  const header = { delimiter: DELIMITER, version, id: terminalIdBytes(ctx.deviceId, version) };
  return {
    bytes: formatMessage(header, type, body, false, serial),
    match: { replySerial: serial, replyMessageId: type },
  };
}

/**
 * A Text command as 8.27 text message 0x8300 (docs/protocols.md §5: many terminals take SMS-style
 * commands there): flag 0x01, [2019: text type 1], the text. Jimi JC371 takes it as 0x8900
 * pass-through type 0xF0 instead. The text is ASCII: the standard's GBK needs an encoder
 * (protocols/ take no library), and ASCII is GBK's first half. One body is at most 1,023 bytes.
 */
export function encodeJt808Command(text: string, ctx: CommandContext): EncodedCommand {
  const passthrough = ctx.model !== undefined && PASSTHROUGH_TEXT_MODELS.has(ctx.model);
  const head = passthrough
    ? [PASSTHROUGH_TYPE_TEXT]
    : versionOf(ctx) === undefined
      ? [TEXT_FLAG_URGENT]
      : [TEXT_FLAG_URGENT, TEXT_TYPE_NOTICE];
  const content = commandBytes(PROTOCOL, text, { delimiters: [], maxBytes: ATTR_BODY_LENGTH_MASK - head.length });
  const body = Buffer.concat([Buffer.from(head), content]);
  return platformMessage(passthrough ? MSG.TRANSPARENT_DOWNLINK : MSG.TEXT_MESSAGE, body, ctx);
}

/**
 * 8.16 terminal control 0x8105: a command word and its parameters (`;`-separated for words 1 and
 * 2): 1 upgrade, 2 connect to a server, 3 power off, 4 reset, 5 factory reset, 6 close data
 * link, 7 close all links; relay words are the vendor's, commonly 0xF0 stop / 0xF1 resume.
 */
export function encodeJt808TerminalControl(word: number, params: string, ctx: CommandContext): EncodedCommand {
  checkUint('jt808 terminal control word', word, 0xff);
  const content =
    params === ''
      ? Buffer.alloc(0)
      : commandBytes(PROTOCOL, params, { delimiters: [], maxBytes: ATTR_BODY_LENGTH_MASK - 1 });
  return platformMessage(MSG.TERMINAL_CONTROL, Buffer.concat([Buffer.from([word]), content]), ctx);
}
