import type { DecodeContext, DecodeResult } from '../types.js';
import { ProtocolError } from '../types.js';
import { PROTOCOL, replyHandshake, replyLogin } from './tk103.constants.js';
import {
  decodeBattery,
  decodeBms,
  decodeCells,
  decodeCommandResult,
  decodeLbsWifi,
  decodeNetwork,
  decodePosition,
  decodeVin,
  shortId,
  type SentenceHandler,
} from './tk103.messages.js';

/** Sentence kinds in the order Tk103ProtocolDecoder.decode tells them apart (by what the sentence contains). */
const KINDS: ReadonlyArray<readonly [(s: string) => boolean, SentenceHandler]> = [
  [(s) => s.indexOf('{') > 0 && s.indexOf('}') > 0, decodeCells],
  [(s) => s.includes('ZC20'), decodeBattery],
  [(s) => s.includes('BZ00'), decodeNetwork],
  [(s) => s.includes('ZC03'), decodeCommandResult],
  [(s) => s.includes('DW5'), decodeLbsWifi],
  [(s) => s.includes('BV00'), decodeVin],
  [(s) => s.includes('BS50') || s.includes('BS51'), decodeBms],
];

/**
 * One `(...)` sentence as cut by the splitter, or one UDP datagram. BP00 (handshake) is answered
 * `(<id>AP01HSO)` and BP05 (login) `(<id>AP05)`, `<id>` being the 12 characters after `(` whatever
 * the dialect (Tk103ProtocolDecoder).
 */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  const sentence = frame.toString('latin1').replace(/[\r\n]+$/, '');
  if (!sentence.startsWith('(') || sentence.length < 18)
    throw new ProtocolError(PROTOCOL, 'not a (<id><command>...) sentence', frame);
  const id = shortId(sentence);
  // the command word: after the 12-character id, or the comma form's second field
  const type = /^\(\d+,([0-9A-Z]{4}),/.exec(sentence)?.[1] ?? sentence.substring(13, 17);
  if (type === 'BP00') return { identity: id, messages: [], replies: [Buffer.from(replyHandshake(id), 'latin1')] };
  const handler = KINDS.find(([test]) => test(sentence))?.[1] ?? decodePosition;
  if (type !== 'BP05') return handler(sentence, ctx);
  const login = Buffer.from(replyLogin(id), 'latin1');
  let result: DecodeResult;
  try {
    result = handler(sentence, ctx);
  } catch (e) {
    // the login is understood even when the position it carries is not: answered, the position not stored
    if (!(e instanceof ProtocolError)) throw e;
    return { identity: id, messages: [], replies: [login], warnings: [e.message] };
  }
  return { ...result, identity: result.identity ?? id, replies: [login, ...result.replies] };
}
