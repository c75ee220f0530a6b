import type { DecodeContext, DecodeResult, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import {
  ACK,
  MAX_AHEAD_MS,
  PROTOCOL,
  SESSION_IDENTITY,
  SESSION_PENDING,
  SESSION_RELEASED,
  SETTING_ACK,
} from './t55.constants.js';
import { gpfidLine, namingLine, splitPrefix } from './t55.identify.js';
import { readPubx, readGptxt, readQze, readWmcs } from './t55.named.js';
import {
  readGga,
  readGll,
  readGpiop,
  readRma,
  readRmc,
  readTrccr,
  type Sentence,
  type SentenceReader,
} from './t55.sentences.js';

/** Sentences read only once the device is known, by how they start (T55ProtocolDecoder.decode). */
const NEEDS_DEVICE: readonly { is: (s: string) => boolean; read: SentenceReader }[] = [
  { is: (s) => s.startsWith('GGA', 3), read: readGga },
  { is: (s) => s.startsWith('GLL', 3), read: readGll },
  { is: (s) => s.startsWith('$GPRMA'), read: readRma },
  { is: (s) => s.startsWith('$TRCCR'), read: readTrccr },
  { is: (s) => s.startsWith('$GPIOP'), read: readGpiop },
];

/** Sentences that name their device themselves. */
const NAMES_DEVICE: readonly { is: (s: string) => boolean; read: SentenceReader }[] = [
  { is: (s) => s.startsWith('QZE'), read: readQze },
  { is: (s) => s.startsWith('$PUBX'), read: readPubx },
  { is: (s) => s.startsWith('$GPTXT'), read: readGptxt },
  { is: (s) => s.startsWith('$ID,'), read: readWmcs },
];

const nothing = (warning?: string): DecodeResult => ({
  messages: [],
  replies: [],
  ...(warning && { warnings: [warning] }),
});

/** The device the line is from before it is read: its prefix, the connection's, or the one its lines named last. */
function knownDevice(ctx: DecodeContext, prefix: string | undefined): string | undefined {
  if (prefix) return prefix;
  return ctx.deviceId ?? (ctx.session[SESSION_IDENTITY] as string | undefined);
}

/** A line that names the device, and that identity from now on. */
function named(ctx: DecodeContext, identity: string, messages: DecodedMessage[] = []): DecodeResult {
  ctx.session[SESSION_IDENTITY] = identity;
  return { identity, messages, replies: [] };
}

/** `$GPFID,<id>`: the device is named; an RMC fix held before it is released, with that identity. */
function decodeGpfid(ctx: DecodeContext, line: string, identity: string): DecodeResult {
  const pending = ctx.session[SESSION_PENDING] as DecodedMessage | undefined;
  const released = ctx.session[SESSION_RELEASED] as { line: string; message: DecodedMessage } | undefined;
  if (pending) {
    delete ctx.session[SESSION_PENDING];
    ctx.session[SESSION_RELEASED] = { line, message: pending };
    return named(ctx, identity, [pending]);
  }
  // the same line decoded again (for the device's settings) releases the same fix again
  if (released?.line === line) return named(ctx, identity, [released.message]);
  return named(ctx, identity);
}

/** A fix dated more than a day ahead (a week-rollover date) keeps its place but not its time. */
function plausible(m: DecodedMessage, now: Date): { message: DecodedMessage; warning?: string } {
  if (!m.fixTime || m.fixTime.getTime() - now.getTime() <= MAX_AHEAD_MS) return { message: m };
  const { fixTime, ...rest } = m;
  return { message: rest, warning: `t55: fix time ${fixTime.toISOString()} is in the future; the receive time stands` };
}

/**
 * RMC: answered `OK1` CR LF (TCP, device known, its `ack` setting on) whether or not it reads, as in
 * Traccar; a fix from a device not yet named is held for `$GPFID`.
 */
function decodeRmc(sentence: string, ctx: DecodeContext, known: string | undefined): DecodeResult {
  const ack = known !== undefined && ctx.transport === 'tcp' && ctx.options?.[SETTING_ACK]?.toLowerCase() === 'true';
  const replies = ack ? [Buffer.from(ACK, 'latin1')] : [];
  let read: Sentence;
  try {
    read = readRmc(sentence, ctx.now);
  } catch (e) {
    if (!(e instanceof ProtocolError) || !ack) throw e;
    return { messages: [], replies, warnings: [e.message] };
  }
  const { message, warning } = plausible(read.message!, ctx.now);
  const warnings = warning ? { warnings: [warning] } : {};
  if (read.identity) return { ...named(ctx, read.identity, [message]), replies, ...warnings };
  if (known === undefined) {
    ctx.session[SESSION_PENDING] = message;
    return { ...nothing('t55: RMC before the device is named: held for $GPFID'), ...warnings };
  }
  return { messages: [message], replies, ...warnings };
}

function decodeSentence(sentence: string, ctx: DecodeContext, known: string | undefined): DecodeResult {
  if (sentence.startsWith('RMC', 3)) return decodeRmc(sentence, ctx, known);
  const needs = NEEDS_DEVICE.find((r) => r.is(sentence));
  if (needs) {
    if (known === undefined) return nothing('t55: no line has named the device yet');
    return { messages: [needs.read(sentence, ctx.now).message!], replies: [] };
  }
  const names = NAMES_DEVICE.find((r) => r.is(sentence));
  if (names) {
    const read = names.read(sentence, ctx.now);
    return named(ctx, read.identity!, read.message ? [read.message] : []);
  }
  return nothing(`t55: sentence not read: ${JSON.stringify(sentence.slice(0, 16))}`);
}

/**
 * One line (TCP, line ending removed) or one datagram. Identification lines name the device for the
 * lines after them (session key `t55.identity`); an id may also stand before the sentence's `$`.
 */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  const line = frame.toString('latin1').trim();
  const { id: prefix, sentence } = splitPrefix(line);
  const known = knownDevice(ctx, prefix);
  const gpfid = gpfidLine(sentence);
  if (gpfid === undefined) delete ctx.session[SESSION_RELEASED];
  try {
    if (gpfid !== undefined) return gpfid ? decodeGpfid(ctx, sentence, gpfid) : nothing('t55: $GPFID without an id');
    const naming = namingLine(sentence);
    if (naming !== undefined) return naming ? named(ctx, naming) : nothing('t55: an identification line without an id');
    const result = decodeSentence(sentence, ctx, known);
    if (!prefix || result.identity !== undefined) return result;
    ctx.session[SESSION_IDENTITY] = prefix;
    return { ...result, identity: prefix };
  } catch (e) {
    if (e instanceof ProtocolError) {
      const identity = prefix || undefined;
      throw new ProtocolError(PROTOCOL, e.message.replace(/^t55: /, ''), frame, identity ? { identity } : {});
    }
    throw e;
  }
}
