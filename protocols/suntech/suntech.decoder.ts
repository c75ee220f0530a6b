import type { DecodeContext, DecodeResult } from '../types.js';
import { ProtocolError } from '../types.js';
import { decodeBinaryReport, decodeZipReport } from './suntech.binary.js';
import { PROTOCOL, SESSION_PREFIX, SESSION_UNIVERSAL, ZIP_MARKER } from './suntech.constants.js';
import { Fields } from './suntech.fields.js';
import {
  decodeAnswer,
  decodeLegacy,
  decodeSt4,
  decodeSt9,
  decodeTravel,
  decodeUniversal,
  type TextOutcome,
} from './suntech.messages.js';

/** a legacy prefix names the model family: `ST300`, `SA200`, `ST910` … */
const MODEL = /^[A-Z]{2}\d{3}$/;

/** text reports, by their first field (SuntechProtocolDecoder.decode) */
function decodeText(f: Fields, ctx: DecodeContext): TextOutcome {
  const prefix = f.next();
  if (prefix === 'RES') return decodeAnswer(f, true); // universal command answer
  if (prefix === 'CRR') return { identity: f.next(), messages: [] }; // crash report (g-sensor samples): not stored
  if (prefix.length < 5) {
    ctx.session[SESSION_UNIVERSAL] = true;
    return decodeUniversal(f, prefix);
  }
  const model = prefix.slice(0, 5);
  const type = prefix.slice(5);
  if (MODEL.test(model)) {
    ctx.session[SESSION_PREFIX] = model;
    ctx.session[SESSION_UNIVERSAL] = false;
  }
  if (type === 'HTE') return decodeTravel(f);
  if (type === 'CMD') return decodeAnswer(f, false);
  if (model.startsWith('ST9')) return decodeSt9(f);
  if (model.startsWith('ST4')) return decodeSt4(f, type);
  return decodeLegacy(f, model, type);
}

/**
 * One report as the splitter cuts it (a trailing CR or LF is ignored). Text reports name the device
 * in their second field, binary ones in 5 bytes after the length. Suntech devices expect no
 * answer. The session keeps the model prefix and whether the device speaks the universal format,
 * so that commands go the way it reports.
 */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  if (frame.length >= 2 && frame[0] === ZIP_MARKER) {
    ctx.session[SESSION_UNIVERSAL] = true;
    return decodeZipReport(frame);
  }
  if (frame.length >= 2 && frame[1] === 0) {
    ctx.session[SESSION_UNIVERSAL] = true;
    return decodeBinaryReport(frame);
  }
  let end = frame.length;
  while (end > 0 && (frame[end - 1] === 0x0d || frame[end - 1] === 0x0a)) end--;
  const text = frame.toString('latin1', 0, end);
  if (!text.includes(';')) {
    // a bare `-Error` and the like: a device's complaint about a command, naming no device
    if (/^-[A-Za-z]/.test(text))
      return { messages: [], replies: [], warnings: [`suntech complaint: ${JSON.stringify(text.slice(0, 40))}`] };
    throw new ProtocolError(PROTOCOL, 'suntech text without fields', frame);
  }
  const out = decodeText(new Fields(text.split(';'), frame), ctx);
  if (out.identity !== undefined && !/^[0-9A-Za-z]{1,20}$/.test(out.identity)) {
    throw new ProtocolError(PROTOCOL, `device id "${out.identity.slice(0, 24)}" is not 1-20 letters or digits`, frame);
  }
  return {
    ...(out.identity && { identity: out.identity }),
    messages: out.messages,
    replies: [],
    ...(out.commandResult && { commandResults: [out.commandResult] }),
  };
}
