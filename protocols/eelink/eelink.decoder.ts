import { ByteReader } from '../shared/byte-reader.js';
import type { CommandResult, DecodeContext, DecodeResult, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import * as C from './eelink.constants.js';
import { eelinkPacket, envelope, envelopeChecksum } from './eelink.encoder.js';
import * as M from './eelink.messages.js';

/** the IMEI of 8 BCD bytes (a 0 nibble first): 15 digits */
const imeiOf = (b: Buffer): string => b.toString('hex').substring(1);

/** What one frame has learned while its packets are read. */
interface FrameState {
  ctx: DecodeContext;
  /** the IMEI bytes of the "EL" envelope, which every UDP answer repeats */
  envelopeImei?: Buffer;
  /** the device the packets are from: the envelope, an earlier login, or the connection */
  identity?: string;
  /** the device the frame itself names (its envelope or a login packet) */
  named?: string;
  messages: DecodedMessage[];
  replies: Buffer[];
  commandResults: CommandResult[];
}

/** The payload handlers by type; 0x01 login, 0x03 heartbeat and 0x07 OBD are special (decodePacket). */
function payload(r: ByteReader, type: number, index: number): M.PacketOutcome {
  if (type === C.MSG_GPS || type === C.MSG_ALARM || type === C.MSG_STATE || type === C.MSG_SMS)
    return M.decodeOld(r, type, index);
  if (type >= C.MSG_NORMAL && type <= C.MSG_OBD_CODE) return M.decodeNew(r, type, index);
  if ((type === C.MSG_HEARTBEAT && r.remaining >= 2) || (type === C.MSG_OBD && r.remaining === 4))
    return M.statusOnly(r);
  if (type === C.MSG_OBD) return M.decodeObd(r);
  if (type === C.MSG_DOWNLINK) return M.decodeResult(r, index);
  return {};
}

/**
 * One packet from `r`: `67 67 | type | u16 length | u16 index | content`. Every type but 0x02 and
 * 0x81 is answered with its type and index (a login also with the time, protocol version 1 and
 * action mask 0); over UDP the answer goes in an envelope. A packet from a device not yet known
 * (no login, no envelope) is answered but not read, as in Traccar.
 */
function decodePacket(r: ByteReader, s: FrameState): void {
  r.skip(2); // 67 67 (not checked, as in Traccar)
  const type = r.u8();
  const body = r.sub(r.u16(), 'packet');
  const index = body.u16();
  if (type !== C.MSG_GPS && type !== C.MSG_DATA) {
    let content: Buffer | undefined;
    if (type === C.MSG_LOGIN) {
      content = Buffer.alloc(7);
      content.writeUInt32BE(Math.floor(s.ctx.now.getTime() / 1000) >>> 0, 0);
      content.writeUInt16BE(C.LOGIN_PROTOCOL_VERSION, 4);
      content[6] = C.LOGIN_ACTION_MASK;
    }
    const answer = eelinkPacket(type, index, content);
    const imei = s.envelopeImei ?? (s.identity !== undefined && /^\d{1,15}$/.test(s.identity) ? s.identity : undefined);
    s.replies.push(s.ctx.transport === 'udp' && imei !== undefined ? envelope(imei, answer) : answer);
  }
  if (type === C.MSG_LOGIN) {
    const imei = imeiOf(body.bytes(C.IMEI_BYTES, 'imei'));
    s.named ??= imei;
    s.identity ??= imei;
    return;
  }
  if (s.identity === undefined) return;
  const out = payload(body, type, index);
  if (out.message) s.messages.push(out.message);
  if (out.commandResult) s.commandResults.push(out.commandResult);
}

/** "EL" | u16 length | u16 checksum | IMEI: checked, and the IMEI kept for the answers and the encoder. */
function readEnvelope(frame: Buffer, s: FrameState, warnings: string[]): string | undefined {
  if (frame.length < C.ENVELOPE_HEADER_BYTES)
    throw new ProtocolError(C.PROTOCOL, `datagram of ${frame.length} bytes is shorter than its envelope`, frame);
  const imei = imeiOf(frame.subarray(6, 6 + C.IMEI_BYTES));
  const end = Math.min(frame.length, 4 + frame.readUInt16BE(2));
  const sum = envelopeChecksum(frame, 6, end);
  let checksumError: string | undefined;
  if (sum !== frame.readUInt16BE(4)) {
    checksumError = `checksum ${frame.readUInt16BE(4).toString(16).padStart(4, '0')} does not match ${sum.toString(16).padStart(4, '0')}`;
    if (s.ctx.checksum === 'strict') throw new ProtocolError(C.PROTOCOL, checksumError, frame, { identity: imei });
    warnings.push(checksumError);
  }
  s.envelopeImei = frame.subarray(6, 6 + C.IMEI_BYTES);
  s.identity = imei;
  s.named = imei;
  if (s.ctx.transport === 'udp') s.ctx.session[C.SESSION_ENVELOPE_IMEI] = imei;
  return checksumError;
}

/**
 * One TCP packet (as the splitter cuts it) or one UDP datagram ("EL" envelope, then one or more
 * packets). TCP packets name no device: the identity comes from a login packet, later packets use
 * the connection's (DecodeContext.deviceId). The envelope has a checksum: a mismatch is a warning
 * (`accept`) or an error (`strict`). `replies` holds one answer per packet answered.
 */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  const s: FrameState = { ctx, messages: [], replies: [], commandResults: [] };
  if (ctx.deviceId !== undefined) s.identity = ctx.deviceId;
  const warnings: string[] = [];
  const enveloped = frame.length >= 2 && frame[0] === 0x45 && frame[1] === 0x4c; // "EL"
  const checksumError = enveloped ? readEnvelope(frame, s, warnings) : undefined;
  const r = new ByteReader(C.PROTOCOL, frame, enveloped ? C.ENVELOPE_HEADER_BYTES : 0);
  if (r.remaining === 0) throw new ProtocolError(C.PROTOCOL, 'no packet', frame);
  while (r.remaining > 0) decodePacket(r, s);
  return {
    ...(s.named !== undefined && { identity: s.named }),
    messages: s.messages,
    replies: s.replies,
    ...(s.commandResults.length && { commandResults: s.commandResults }),
    ...(warnings.length && { warnings }),
    ...(checksumError && { checksumError }),
  };
}
