import { ProtocolError, type DecodeContext, type DecodeResult } from '../types.js';
import { decodeBinary } from './atrack.binary.js';
import { BINARY_HEADER_BYTES, COMMA, DOLLAR, KEEPALIVE_BYTES, KEEPALIVE_MARK, PROTOCOL } from './atrack.constants.js';
import { atrackOptions } from './atrack.options.js';
import { decodeAnswer, decodeTextReport } from './atrack.text.js';

/**
 * The FE 02 keep-alive (unit id u64, sequence u16): echoed back as it came. It names the device,
 * so a connection that starts with one is known at once; it carries no position.
 */
function decodeKeepAlive(frame: Buffer): DecodeResult {
  if (frame.length < KEEPALIVE_BYTES) throw new ProtocolError(PROTOCOL, 'keep-alive shorter than 12 bytes', frame);
  const identity = frame.readBigInt64BE(2).toString();
  return { identity, messages: [], replies: [Buffer.from(frame)] };
}

/**
 * One frame as the splitter cuts it, or one UDP datagram, told apart the way the reference tells
 * them: FE 02 keep-alive, `$` command answer, a comma third (text report, whatever its first two
 * bytes), else a binary report. Settings: DecodeContext.options (atrack.options.ts).
 */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  if (frame.length < 3) throw new ProtocolError(PROTOCOL, 'frame shorter than 3 bytes', frame);
  if (frame.readUInt16BE(0) === KEEPALIVE_MARK) return decodeKeepAlive(frame);
  if (frame[0] === DOLLAR) return decodeAnswer(frame, ctx);
  const o = atrackOptions(ctx);
  if (frame[2] === COMMA) return decodeTextReport(frame, o);
  if (frame.length < BINARY_HEADER_BYTES)
    throw new ProtocolError(PROTOCOL, 'binary report shorter than its header', frame);
  return decodeBinary(frame, ctx, o);
}
