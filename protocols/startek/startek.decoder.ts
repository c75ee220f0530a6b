import type { DecodeContext, DecodeResult, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import { sum8 } from '../shared/crc.js';
import { CMD_REPORT, CMD_SERIAL, PROTOCOL } from './startek.constants.js';
import { decodeReport } from './startek.report.js';
import { decodeSerial } from './startek.serial.js';

/**
 * `&&`, index, length, `,imei,`, three-digit command, `,`, content, two hex digits of checksum, CR LF.
 * The CR LF may be missing (a frame given to `trackgate decode` without it); it is not counted.
 */
const ENVELOPE = /^&&.\d+,(\d+),([0-9A-Fa-f]{3}),(.+)([0-9A-Fa-f]{2})(?:\r\n)?$/s;

/** The message of each command code the device sends; any other code answers a server command. */
const HANDLERS: Readonly<Record<string, (content: string) => DecodedMessage>> = {
  [CMD_REPORT]: decodeReport,
  [CMD_SERIAL]: decodeSerial,
};

/** The checksum: the 8-bit sum of every byte before it, as two hex digits. */
function checksumProblem(frame: Buffer, text: string): string | undefined {
  const end = frame.length - (text.endsWith('\r\n') ? 4 : 2);
  const given = parseInt(text.slice(end, end + 2), 16);
  const computed = sum8(frame, 0, end);
  if (given === computed) return undefined;
  return `startek checksum ${text.slice(end, end + 2)} but the bytes sum to ${computed.toString(16).toUpperCase().padStart(2, '0')}`;
}

/**
 * One frame as the splitter cuts it (CR LF included). Every frame names its device (the IMEI after
 * the length); iStartek devices expect no answer. A command code other than 000 and 710 is the
 * device's answer to a command: its content is the answer (`129,OK`).
 */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  const text = frame.toString('latin1');
  const m = ENVELOPE.exec(text);
  if (!m) throw new ProtocolError(PROTOCOL, 'no &&<index><length>,<imei>,<command>,... frame', frame);
  const [, identity, code, content] = m;
  const problem = checksumProblem(frame, text);
  if (problem && ctx.checksum === 'strict') throw new ProtocolError(PROTOCOL, problem, frame, { identity });
  const checksum = problem ? { checksumError: problem, warnings: [problem] } : {};
  const handler = HANDLERS[code];
  if (!handler) {
    return {
      identity,
      messages: [{ alarms: [], attributes: { type: code, result: content } }],
      replies: [],
      commandResults: [{ text: content }],
      ...checksum,
    };
  }
  let message: DecodedMessage;
  try {
    message = handler(content);
  } catch (e) {
    if (e instanceof ProtocolError)
      throw new ProtocolError(PROTOCOL, e.message.replace(/^startek: /, ''), frame, { identity });
    throw e;
  }
  return { identity, messages: [message], replies: [], ...checksum };
}
