import type { DecodeContext, DecodeResult } from '../types.js';
import { ProtocolError } from '../types.js';
import { ANY_SENTENCE, PROTOCOL } from './laipac.constants.js';
import { avrmcReplies, nmeaChecksum, readAvrmc, readEavsys } from './laipac.messages.js';

type Handler = (text: string, frame: Buffer, ctx: DecodeContext) => DecodeResult;

/** `$ECHK,<id>,<n>*XX`: keep-alive, echoed back as it came, with CR LF. */
const decodeEchk: Handler = (text) => {
  const identity = ANY_SENTENCE.exec(text)?.[1];
  return { ...(identity && { identity }), messages: [], replies: [Buffer.from(`${text}\r\n`, 'latin1')] };
};

const decodeEavsys: Handler = (text, frame, ctx) => {
  const r = readEavsys(text, ctx.now);
  if (!r) throw new ProtocolError(PROTOCOL, 'unreadable $EAVSYS', frame);
  return { identity: r.identity, messages: [r.message], replies: [] };
};

const decodeAvrmc: Handler = (text, frame, ctx) => {
  const r = readAvrmc(text, ctx.model);
  if (!r) throw new ProtocolError(PROTOCOL, 'unreadable $AVRMC', frame, { identity: ANY_SENTENCE.exec(text)?.[1] });
  return { identity: r.identity, messages: [r.message], replies: avrmcReplies(r.status, r.event, r.checksum, ctx) };
};

/** A sentence Traccar does not read (`$AVSYS`, command answers): nothing, but it names its device. */
const ignore: Handler = (text) => {
  const identity = ANY_SENTENCE.exec(text)?.[1];
  return { ...(identity && { identity }), messages: [], replies: [] };
};

/** by the sentence's start, as LaipacProtocolDecoder tells them apart */
const HANDLERS: ReadonlyArray<readonly [string, Handler]> = [
  ['$ECHK', decodeEchk],
  ['$EAVSYS', decodeEavsys],
  ['$AVRMC', decodeAvrmc],
];

/** The sentence's XOR against its `*XX`; a sentence without one is not checked. */
function checkXor(text: string, frame: Buffer, ctx: DecodeContext): string | undefined {
  const star = text.lastIndexOf('*');
  const given = /^[0-9a-fA-F]{2}$/.test(text.substring(star + 1)) ? text.substring(star + 1) : undefined;
  if (star < 0 || !given) return undefined;
  const computed = nmeaChecksum(text.substring(1, star));
  if (given.toUpperCase() === computed) return undefined;
  const error = `checksum ${given} does not match ${computed}`;
  if (ctx.checksum === 'strict') throw new ProtocolError(PROTOCOL, error, frame);
  return error;
}

/** One Laipac sentence (a line without its line ending). */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  const text = frame.toString('latin1').replace(/[\r\n]+$/, '');
  if (!text.startsWith('$')) throw new ProtocolError(PROTOCOL, 'not a $ sentence', frame);
  const handler = HANDLERS.find(([start]) => text.startsWith(start))?.[1] ?? ignore;
  const error = checkXor(text, frame, ctx);
  const result = handler(text, frame, ctx);
  if (!error) return result;
  return { ...result, checksumError: error, warnings: [...(result.warnings ?? []), error] };
}
