import type { DecodeContext, DecodeResult } from '../types.js';
import { ProtocolError } from '../types.js';
import { PROTOCOL } from './gps103.constants.js';
import {
  decodeAlternative,
  decodeHeartbeat,
  decodeLogin,
  decodeObd,
  decodePhoto,
  decodeRegular,
  type SentenceHandler,
} from './gps103.messages.js';

type SentenceKind = 'login' | 'heartbeat' | 'photo' | 'obd' | 'alternative' | 'regular';

/**
 * Sentence kinds in the order Gps103ProtocolDecoder.decode tells them apart (Traccar looks for `vr`
 * and `OBD` at offset 21, i.e. after a 15-digit IMEI; any IMEI length is accepted here).
 */
function classify(sentence: string): SentenceKind {
  if (sentence.includes('imei:') && sentence.length <= 30) return 'login';
  if (/^\d/.test(sentence)) return 'heartbeat';
  if (/^imei:\d+,vr/.test(sentence)) return 'photo';
  if (/^imei:\d+,OBD,/.test(sentence)) return 'obd';
  if (sentence.endsWith('*')) return 'alternative';
  return 'regular';
}

/** decodes an `imei:` report (no login, no heartbeat prefix) */
const decodeReport: SentenceHandler = (sentence, ctx) => {
  const kind = classify(sentence);
  return kind === 'login' || kind === 'heartbeat' ? decodeRegular(sentence, ctx) : HANDLERS[kind](sentence, ctx);
};

const HANDLERS: Record<SentenceKind, SentenceHandler> = {
  login: decodeLogin,
  heartbeat: (sentence, ctx) => decodeHeartbeat(sentence, ctx, decodeReport),
  photo: decodePhoto,
  obd: decodeObd,
  alternative: decodeAlternative,
  regular: decodeRegular,
};

/**
 * One sentence as cut by the splitter (its `;`/`*`/line-ending delimiter may still be attached),
 * or one UDP datagram.
 */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  let sentence = frame.toString('latin1').replace(/[\r\n]+$/, '');
  if (sentence.trim() === '') return { messages: [], replies: [] };
  const warnings: string[] = [];
  const start = sentence.indexOf('imei:');
  if (start < 0 && !/^\d/.test(sentence)) {
    throw new ProtocolError(PROTOCOL, 'neither an imei: report nor an IMEI heartbeat', frame);
  }
  if (start > 0 && !/^\d/.test(sentence) && !/^##,$/.test(sentence.substring(0, start))) {
    warnings.push(`skipped ${start} bytes before imei:`);
    sentence = sentence.substring(start);
  }
  const result = HANDLERS[classify(sentence)](sentence, ctx);
  const all = [...warnings, ...(result.warnings ?? [])];
  return { ...result, ...(all.length > 0 && { warnings: all }) };
}
