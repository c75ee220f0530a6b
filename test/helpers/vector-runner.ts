/**
 * The one runner of the captured frames (test/vectors/<protocol>.jsonl, docs/protocols.md §4): every
 * decoder and frame-decoder vector of a protocol becomes one test, checked by the same rules for
 * every protocol (`runVectors`); every encoder vector (a server -> device command) becomes one test
 * that must produce exactly its bytes (`runEncoderVectors`).
 */
import test, { type ExecutionContext } from 'ava';
import {
  ProtocolError,
  type DecodeContext,
  type DecodeResult,
  type DecodedMessage,
  type FrameSplitter,
  type HttpDecodeResult,
  type ProtocolModule,
} from '../../protocols/types.js';
import { frameBytes, loadVectors, vectorTime, vectorValue, type Vector } from './vectors.js';

/** Latitude and longitude match within 1e-5 degrees, absolute: the vectors' documented tolerance. */
export const DEGREES_TOLERANCE = 1e-5;

/**
 * Every other number matches within one millionth of the expected value (absolute below 1). Traccar
 * compares exactly, but we convert at the decoder boundary and the vectors keep Traccar's units
 * (speed goes knots -> km/h -> knots, a voltage may be mV / 1000 where Traccar writes mV * 0.001),
 * which moves the last bits; a real decoding error (wrong scale, wrong byte) is far larger.
 */
export const RELATIVE_TOLERANCE = 1e-6;

export const closeTo = (actual: number, expected: number): boolean =>
  Math.abs(actual - expected) <= RELATIVE_TOLERANCE * Math.max(1, Math.abs(expected));

/** Traccar's `ProtocolTest` bounds on every decoded position (docs/protocols.md §2). */
const MAX_SPEED_KNOTS = 869;
const ALTITUDE_M = [-12262, 18000];
const EARLIEST_FIX = Date.UTC(1999, 0, 1);
const MAX_AHEAD_MS = 25 * 3600_000;

/**
 * The decoder state a vector's `setup` asks for. `setModelOverride("X")` is the device record's
 * model (DecodeContext.model); a setter a protocol names in `settings` (VectorRunOptions) is a
 * device setting, `setCustom(true)` becoming the option `custom=true` (DecodeContext.options, as
 * `trackgate decode --option`); so is a `config` key `<protocol>.<name>` (`xexun.extended: true`
 * becoming `extended=true`); any other setter or key has no counterpart in trackgate, and its vector
 * must be a known failure. Later setters win, as in the Traccar test.
 */
export function setupOf(
  v: Vector,
  settings: readonly string[] = [],
): { model?: string; options: Record<string, string>; unsupported: string[] } {
  const out: { model?: string; options: Record<string, string>; unsupported: string[] } = {
    options: {},
    unsupported: [],
  };
  const setter = v.test_kind === 'encoder' ? 'encoder' : 'decoder';
  for (const line of [v.setup ?? []].flat()) {
    const call = new RegExp(`^${setter}\\.set(\\w+)\\((.*)\\)$`).exec(line);
    const name = call ? call[1][0].toLowerCase() + call[1].slice(1) : '';
    const value = call ? call[2].replace(/^"(.*)"$/, '$1') : '';
    if (name === 'modelOverride') out.model = value;
    else if (call && settings.includes(name)) out.options[name] = value;
    else out.unsupported.push(line);
  }
  // `config` keys `<protocol>.<name>` are Traccar configuration the decoder was built with: a setting too
  for (const [key, value] of Object.entries(v.config ?? {})) {
    const name = key.startsWith(`${v.protocol}.`) ? key.slice(v.protocol.length + 1) : '';
    if (settings.includes(name)) out.options[name] = String(value);
    else out.unsupported.push(`config ${key}=${String(value)}`);
  }
  return out;
}

/** One decode of a frame the way its transport is decoded: HTTP request, UDP datagram or TCP frame. */
function decodeOne(
  p: ProtocolModule,
  v: Pick<Vector, 'frame' | 'encoding' | 'transport' | 'line'>,
  ctx: DecodeContext,
): DecodeResult | HttpDecodeResult {
  if (v.transport === 'http') {
    if (typeof v.frame === 'string' || !p.decodeHttp)
      throw new Error(`line ${v.line}: an HTTP vector needs a request and decodeHttp`);
    const headers = Object.fromEntries(Object.entries(v.frame.headers ?? {}).map(([k, x]) => [k.toLowerCase(), x]));
    return p.decodeHttp(
      { method: v.frame.method, url: v.frame.uri, headers, body: Buffer.from(v.frame.body ?? '') },
      { ...ctx, transport: 'http' },
    );
  }
  const decode = v.transport === 'udp' ? p.decodeDatagram : p.decode;
  if (!decode) throw new Error(`line ${v.line}: ${p.name} has no ${v.transport} decoder`);
  return decode(frameBytes(v), ctx);
}

/**
 * Decodes a vector's frame on a session of its own, as one connection (or one UDP peer) would
 * carry it: its `requires_prior` frames first, in `seq` order, each naming its device for those
 * after it as a login does on a connection (DecodeContext.deviceId); then the frame itself.
 */
export function decodeVector(
  p: ProtocolModule,
  v: Vector,
  now: Date,
  settings: readonly string[] = p.settings ?? [],
): DecodeResult | HttpDecodeResult {
  const { model, options } = setupOf(v, settings);
  const ctx: DecodeContext = {
    now,
    transport: v.transport,
    checksum: 'accept',
    session: {},
    ...(model !== undefined && { model }),
    ...(Object.keys(options).length > 0 && { options }),
  };
  const prior = [...(v.requires_prior ?? [])].sort((a, b) => a.seq - b.seq);
  for (const f of prior) {
    const r = decodeOne(
      p,
      { ...f, transport: f.transport ?? (v.transport === 'udp' ? 'udp' : 'tcp'), line: v.line },
      ctx,
    );
    if (r.identity !== undefined) ctx.deviceId = r.identity;
  }
  return decodeOne(p, v, ctx);
}

function checkPosition(
  t: ExecutionContext,
  m: DecodedMessage | undefined,
  e: Record<string, unknown>,
  where: string,
): void {
  t.truthy(m?.location, `${where}: a message with a location`);
  if (!m?.location) return;
  const l = m.location;
  if (m.fixTime) {
    t.true(m.fixTime.getTime() > EARLIEST_FIX, `${where}: fix time after 1999`);
    t.true(m.fixTime.getTime() < Date.now() + MAX_AHEAD_MS, `${where}: fix time under now + 25 h`);
  }
  t.true(Math.abs(l.latitudeDeg) <= 90 && Math.abs(l.longitudeDeg) <= 180, `${where}: lat/lon in range`);
  if (l.speedKmh !== undefined)
    t.true(l.speedKmh >= 0 && l.speedKmh / 1.852 <= MAX_SPEED_KNOTS, `${where}: speed 0-869 kn`);
  if (l.courseDeg !== undefined) t.true(l.courseDeg >= 0 && l.courseDeg <= 360, `${where}: course 0-360`);
  if (l.altitudeM !== undefined)
    t.true(l.altitudeM >= ALTITUDE_M[0] && l.altitudeM <= ALTITUDE_M[1], `${where}: altitude in range`);
  if (typeof e.time === 'string') t.is(m.fixTime && vectorTime(m.fixTime), e.time, `${where}: time`);
  if (typeof e.valid === 'boolean') t.is(l.valid, e.valid, `${where}: valid`);
  if (typeof e.lat === 'number')
    t.true(Math.abs(l.latitudeDeg - e.lat) <= DEGREES_TOLERANCE, `${where}: lat ${l.latitudeDeg} vs ${e.lat}`);
  if (typeof e.lon === 'number')
    t.true(Math.abs(l.longitudeDeg - e.lon) <= DEGREES_TOLERANCE, `${where}: lon ${l.longitudeDeg} vs ${e.lon}`);
}

/** The bytes an `ack` names; an HTTP ack names a status instead. */
function ackBytes(ack: NonNullable<Vector['ack']>): Buffer {
  return ack.encoding === 'hex' ? Buffer.from(ack.data, 'hex') : Buffer.from(ack.data, 'latin1');
}

/**
 * The expectation of a decoder vector (docs/protocols.md §4), then its derived `ack`: every reply the
 * frame gets, joined, is exactly the ack (an HTTP ack: the answer has its status).
 */
export function checkVector(t: ExecutionContext, v: Vector, r: DecodeResult | HttpDecodeResult): void {
  const e = v.expect;
  const where = `line ${v.line}`;
  switch (e.assert) {
    case 'position':
      checkPosition(
        t,
        r.messages.find((m) => m.location),
        e,
        where,
      );
      break;
    case 'positions':
      t.true(r.messages.length > 0, `${where}: positions`);
      if (e.checkLocation !== false)
        r.messages.forEach((m, i) =>
          checkPosition(t, m, (e.appliesTo as Record<string, unknown>) ?? {}, `${where} #${i}`),
        );
      break;
    case 'attributes':
      t.true(
        r.messages.some((m) => Object.keys(m.attributes).length > 0),
        `${where}: a message with attributes`,
      );
      break;
    case 'attribute': {
      const first = r.messages[0];
      t.truthy(first, `${where}: a message`);
      if (!first) break;
      const actual = vectorValue(first, String(e.key));
      if (e.value === null) t.is(actual, undefined, `${where}: no ${String(e.key)}`);
      else if (typeof e.value === 'number' && typeof actual === 'number')
        t.true(closeTo(actual, e.value), `${where}: ${String(e.key)} ${actual} vs ${e.value}`);
      else t.deepEqual(actual, e.value, `${where}: ${String(e.key)}`);
      break;
    }
    case 'null':
      t.is(r.messages.length, 0, `${where}: no messages`);
      break;
    case 'notNull':
      t.true(r.messages.length > 0 || r.identity !== undefined, `${where}: a message or an identity`);
      break;
    default:
      t.fail(`${where}: unknown assert ${e.assert}`);
  }
  if (!v.ack) return;
  if (v.ack.encoding === 'http') {
    const status = /^HTTP (\d{3})/.exec(v.ack.data);
    t.truthy(status, `${where}: the ack names an HTTP status`);
    t.is((r as HttpDecodeResult).status, Number(status?.[1]), `${where}: ack status`);
  } else {
    t.is(
      Buffer.concat(r.replies).toString('hex'),
      ackBytes(v.ack).toString('hex'),
      `${where}: ack (every reply, joined)`,
    );
  }
}

/**
 * A frame-decoder vector: the first frames the splitter cuts from `frame` are `frame_out` (nothing
 * yet for `null`). What the input holds after them may make more frames: Traccar's frame decoder
 * returns one frame per call and its test checks that one, or, when its `note` says `frame #N` of
 * the same input, the N-th.
 */
export function checkFrames(t: ExecutionContext, v: Vector, splitter: FrameSplitter): void {
  const frames = splitter.push(frameBytes(v)).map((f) => f.toString('hex'));
  if (v.expect.assert === 'null') {
    t.deepEqual(frames, [], `line ${v.line}: no frame yet`);
    return;
  }
  const out = [(v.expect.frame_out as string | string[] | undefined) ?? v.frame_out ?? []].flat();
  const want = out.map((o) => (v.encoding === 'hex' ? o.toLowerCase() : Buffer.from(o, 'latin1').toString('hex')));
  const skip = Number(/frame #(\d+)/.exec(v.note ?? '')?.[1] ?? 1) - 1;
  t.deepEqual(frames.slice(skip, skip + want.length), want, `line ${v.line}: frames`);
}

/**
 * A vector trackgate does not decode as Traccar's test expects: why, and what it does with the
 * frame instead, checked (`decode` decodes it as the runner does). A `test.failing` in its place
 * passed on any failure, a crash included, and so checked nothing.
 */
export interface Difference {
  reason: string;
  instead(t: ExecutionContext, decode: () => DecodeResult | HttpDecodeResult): void;
}

export interface VectorRunOptions {
  /** `ctx.now` of every decode (time-dependent replies); the 25 h check uses the wall clock, as Traccar's does */
  now?: Date;
  /** vectors this decoder does not pass, by line: each checks what trackgate does instead */
  differences?: Readonly<Record<number, Difference>>;
  /**
   * The splitter for a frame-decoder vector. Per protocol because some Traccar frame decoders
   * take constructor options (`new H02FrameDecoder(45)`: a fixed binary length); default
   * `protocol.createSplitter()`.
   */
  splitterFor?: (v: Vector) => FrameSplitter;
  /**
   * Every decoded vector must name its device. Per protocol because only some frames carry the
   * identity themselves (every OsmAnd request does); elsewhere it comes from an earlier login.
   */
  everyFrameNamesItsDevice?: boolean;
  /**
   * Decoder setters whose state this decoder reads from the frame itself instead of a setting
   * (Suntech's optional report fields): vectors with only such setters run as any other, and must pass.
   */
  detectedSetup?: RegExp;
  /**
   * The device settings this protocol reads (DecodeContext.options), by option name: a vector's
   * `decoder.setCustom(true)` becomes `custom=true` when `custom` is listed here. Default: the
   * protocol's own `settings`.
   */
  settings?: readonly string[];
}

/**
 * Decodes a vector; for a `null` vector (Traccar returns nothing), a frame this decoder cannot read
 * (ProtocolError, which the gateway drops as malformed) is nothing too: no messages, no reply, so an
 * `ack` the vector names still fails.
 */
function decodeOrNothing(
  protocol: ProtocolModule,
  v: Vector,
  now: Date,
  settings: readonly string[] = [],
): DecodeResult | HttpDecodeResult {
  try {
    return decodeVector(protocol, v, now, settings);
  } catch (e) {
    if (v.expect.assert !== 'null' || !(e instanceof ProtocolError)) throw e;
    return { ...(e.identity !== undefined && { identity: e.identity }), messages: [], replies: [] };
  }
}

/** Registers one test per decoder and frame-decoder vector of `protocol`. */
export function runVectors(protocol: ProtocolModule, o: VectorRunOptions = {}): void {
  const now = o.now ?? new Date();
  o = { ...o, settings: o.settings ?? protocol.settings ?? [] };
  const differences = o.differences ?? {};
  const vectors = loadVectors(protocol.name).filter((v) => v.test_kind !== 'encoder');
  for (const line of Object.keys(differences)) {
    if (!vectors.some((v) => v.line === Number(line)))
      throw new Error(`${protocol.name}: the difference of line ${line} names no decoder vector`);
  }
  for (const v of vectors) {
    const title = `${protocol.name}.decoder: vector line ${v.line} (${v.msg_type ?? v.kind}, ${v.test_kind}, ${v.expect.assert}, ${v.transport})`;
    const run = (t: ExecutionContext): void => {
      if (v.test_kind === 'frame_decoder') {
        checkFrames(t, v, o.splitterFor?.(v) ?? protocol.createSplitter!());
        return;
      }
      const unsupported = setupOf(v, o.settings).unsupported.filter((line) => !o.detectedSetup?.test(line));
      if (unsupported.length)
        t.fail(
          `line ${v.line}: setup ${unsupported.join('; ')} has no trackgate counterpart; list the vector's difference`,
        );
      const result = decodeOrNothing(protocol, v, now, o.settings);
      if (o.everyFrameNamesItsDevice) t.truthy(result.identity, `line ${v.line}: identity`);
      checkVector(t, v, result);
    };
    const difference = differences[v.line];
    if (difference)
      test(`${title}: differs from Traccar: ${difference.reason}`, (t) =>
        difference.instead(t, () => decodeVector(protocol, v, now, o.settings)));
    else test(title, run);
  }
}

/**
 * How one encoder vector is made here. Traccar's encoder tests name a command type (`engineStop`,
 * `custom` with `data`); trackgate encodes Text, so each case says which text (and context) stands
 * for that command, or why the vector cannot pass.
 */
export interface EncoderCase {
  /** the bytes trackgate writes for the vector's command; `model` is the vector's `encoder.setModelOverride` */
  encode: (o: { model?: string }) => Buffer;
  /**
   * trackgate does not write the vector's bytes: why, and what it does instead, checked (the bytes
   * it writes, or its refusal). Should it write them one day, the test says to drop this.
   */
  differs?: { reason: string; instead(t: ExecutionContext, encode: () => Buffer): void };
}

/**
 * Registers one test per encoder vector of `protocol`: `cases[line].encode` must produce exactly the
 * vector's bytes. Every encoder vector needs a case, so none is skipped in silence.
 */
export function runEncoderVectors(protocol: ProtocolModule, cases: Readonly<Record<number, EncoderCase>>): void {
  const vectors = loadVectors(protocol.name).filter((v) => v.test_kind === 'encoder');
  for (const line of Object.keys(cases)) {
    if (!vectors.some((v) => v.line === Number(line)))
      throw new Error(`${protocol.name}: encoder case line ${line} is no encoder vector`);
  }
  for (const v of vectors) {
    const c = cases[v.line];
    if (!c) throw new Error(`${protocol.name}: encoder vector line ${v.line} has no case`);
    const command = v.expect.command as { type?: string } | undefined;
    const title = `${protocol.name}.encoder: vector line ${v.line} (${command?.type ?? '?'})`;
    const { model, unsupported } = setupOf(v);
    const encode = () => c.encode(model === undefined ? {} : { model });
    const run = (t: ExecutionContext): void => {
      if (unsupported.length) t.fail(`line ${v.line}: setup ${unsupported.join('; ')} has no trackgate counterpart`);
      t.is(encode().toString('hex'), frameBytes(v).toString('hex'), `line ${v.line}`);
    };
    const differs = c.differs;
    if (!differs) test(`${title} yields exactly its bytes`, run);
    else {
      test(`${title} differs from Traccar: ${differs.reason}`, (t) => {
        let written: string | undefined;
        try {
          written = encode().toString('hex');
        } catch {
          /* a refusal: `instead` says which */
        }
        t.not(
          written,
          frameBytes(v).toString('hex'),
          `line ${v.line}: trackgate writes the vector's bytes now: drop its difference`,
        );
        differs.instead(t, encode);
      });
    }
  }
}
