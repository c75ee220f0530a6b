import { commandBytes } from '../shared/command-text.js';
import { crc16CcittFalse } from '../shared/crc.js';
import { CommandError, type CommandContext, type EncodedCommand } from '../types.js';
import { HEADER_BYTES, ID_BYTES, MAX_FRAME_BYTES, PROTOCOL, SERVER_MARK, TRAILER_BYTES } from './meiligao.constants.js';

/**
 * A server frame: `@@ | u16 length | id (7 bytes, as the device wrote it) | u16 command | data |
 * CRC-16/CCITT-FALSE over everything before it | CR LF`. Acknowledgements copy the device's id
 * bytes; commands write the device id's first 14 digits, padded with F.
 */
export function meiligaoFrame(id: Buffer, command: number, data: Buffer): Buffer {
  const length = HEADER_BYTES + data.length + TRAILER_BYTES;
  const out = Buffer.alloc(length);
  out[0] = SERVER_MARK;
  out[1] = SERVER_MARK;
  out.writeUInt16BE(length, 2);
  id.copy(out, 4, 0, ID_BYTES);
  out.writeUInt16BE(command, 4 + ID_BYTES);
  data.copy(out, HEADER_BYTES);
  const crcAt = HEADER_BYTES + data.length;
  out.writeUInt16BE(crc16CcittFalse(out, 0, crcAt), crcAt);
  out[crcAt + 2] = 0x0d;
  out[crcAt + 3] = 0x0a;
  return out;
}

/** The device id as the 7 id bytes: its first 14 digits, F-padded (Traccar MeiligaoProtocolEncoder). */
function idBytes(deviceId: string): Buffer {
  if (!/^\d{1,20}$/.test(deviceId))
    throw new CommandError(PROTOCOL, 'DEVICE_ID', `device id "${deviceId}" is not the digits a Meiligao id has`);
  return Buffer.from(`${deviceId}FFFFFFFFFFFFFF`.slice(0, 2 * ID_BYTES), 'hex');
}

const COMMAND = /^([0-9a-fA-F]{4})(?:([,#])(.*))?$/s;

/**
 * A Text command is a command word in 4 hex digits (manual §4.2: `4101` track on demand, `4102`
 * track by interval, `4106` movement alarm, `4114`/`4115` output control, `4132` time zone, `4151`
 * take photo, `4902` reboot), then optionally its data: `,` and ASCII text (`4132,480`), or `#` and
 * hex bytes (`4102#000a`, `4115#01`). Devices answer with ordinary frames, which echo nothing of
 * the command.
 */
export function encodeMeiligaoCommand(text: string, ctx: CommandContext): EncodedCommand {
  const id = idBytes(ctx.deviceId);
  const parts = COMMAND.exec(text);
  if (!parts) {
    commandBytes(PROTOCOL, text, { delimiters: [], maxBytes: Number.POSITIVE_INFINITY });
    throw new CommandError(
      PROTOCOL,
      'CHARSET',
      `"${text}" is not a 4-hex-digit command word, optionally with ",text" or "#hex" data`,
    );
  }
  const [, word, kind, rest = ''] = parts;
  const maxBytes = MAX_FRAME_BYTES - HEADER_BYTES - TRAILER_BYTES;
  let data: Buffer;
  if (kind === '#') {
    if (!/^(?:[0-9a-fA-F]{2})*$/.test(rest)) throw new CommandError(PROTOCOL, 'CHARSET', `"${rest}" is not hex bytes`);
    data = Buffer.from(rest, 'hex');
    if (data.length > maxBytes)
      throw new CommandError(PROTOCOL, 'TOO_LONG', `the data is ${data.length} bytes; at most ${maxBytes}`);
  } else data = kind === ',' ? commandBytes(PROTOCOL, rest, { delimiters: [], maxBytes }) : Buffer.alloc(0);
  return { bytes: meiligaoFrame(id, Number.parseInt(word, 16), data), match: {} };
}
