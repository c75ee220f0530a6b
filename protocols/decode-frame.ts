/**
 * `trackgate decode`: captured frames in, decoded in order on one session, `{identity?, messages, replies: [hex]}` out, nothing stored;
 * positions in `messages` use the REST names (`latitude`, `speed`, `dateTime`, ...).
 * Binary protocols take hex; text protocols take the text (a hex string is also recognised when the
 * protocol's frames are binary at times, e.g. H02 `$` frames, and `--hex` says so for any); OsmAnd
 * takes a URL path with query or a JSON body.
 */
import { getProtocol, protocols } from './index.js';
import { ProtocolError, type DecodeContext, type DecodeResult, type ProtocolModule } from './types.js';
import { messageView, type MessageView } from './shared/message.view.js';

const HEX = /^(?:[0-9a-fA-F]{2})+$/;

function frameBytes(name: string, encoding: string, frame: string, hex: boolean): Buffer {
  const compact = frame.replace(/\s+/g, '');
  if (encoding === 'hex' || hex) {
    if (!HEX.test(compact)) throw new ProtocolError(name, 'the frame must be hex digits (two per byte)');
    return Buffer.from(compact, 'hex');
  }
  // Text protocols with binary variants (H02 `$`/`X` frames, Queclink `+RSP`/`+EVT`) may be given as hex.
  if (HEX.test(compact) && /^(24|58|2b)/i.test(compact) && compact.length >= 40) return Buffer.from(compact, 'hex');
  return Buffer.from(frame.replace(/\\r/g, '\r').replace(/\\n/g, '\n'), 'latin1');
}

/** What `trackgate decode` prints: positions under the REST names (shared/message.view.ts), replies in hex. */
export interface DecodedFrame {
  identity?: string;
  messages: MessageView[];
  replies: string[];
  warnings?: string[];
}

function present(r: DecodeResult): DecodedFrame {
  return {
    ...(r.identity ? { identity: r.identity } : {}),
    messages: r.messages.map(messageView),
    replies: r.replies.map((b) => b.toString('hex')),
    ...(r.warnings?.length ? { warnings: r.warnings } : {}),
  };
}

/** How `trackgate decode` decodes: the transport, the clock, and the device record's model and settings. */
export interface DecodeOptions {
  udp: boolean;
  now: Date;
  /** the frame is given as hex whatever the protocol (the binary frames of text protocols: Suntech, Queclink, H02) */
  hex?: boolean;
  /** the device record's model (DecodeContext.model) */
  model?: string;
  /** the device record's decoder settings (DecodeContext.options), names from the protocol's `settings` */
  options?: Readonly<Record<string, string>>;
}

/** What `trackgate decode` prints for a frame it cannot read, when it was given several. */
export interface UndecodedFrame {
  messages: [];
  replies: [];
  error: string;
}

function protocolOf(name: string, o: DecodeOptions): ProtocolModule {
  const p = getProtocol(name);
  if (!p) throw new Error(`unknown protocol "${name}" (known: ${Object.keys(protocols).sort().join(', ')})`);
  const known = p.settings ?? [];
  for (const option of Object.keys(o.options ?? {})) {
    if (!known.includes(option))
      throw new Error(
        `${name} has no setting "${option}"${known.length ? ` (it has: ${known.join(', ')})` : ' (it has none)'}`,
      );
  }
  return p;
}

function decodeOn(p: ProtocolModule, frame: string, o: DecodeOptions, ctx: DecodeContext): DecodedFrame {
  const name = p.name;
  if (p.decodeHttp) {
    const isJson = /^\s*[[{]/.test(frame);
    const url = isJson ? '/' : frame.startsWith('/') || frame.startsWith('?') ? frame : `/?${frame}`;
    const result = p.decodeHttp(
      {
        method: isJson ? 'POST' : 'GET',
        url,
        headers: isJson ? { 'content-type': 'application/json' } : {},
        body: Buffer.from(isJson ? frame : ''),
      },
      { ...ctx, transport: 'http' },
    );
    if (result.status >= 400) throw new ProtocolError(name, `the request would be answered ${result.status}`);
    return present(result);
  }
  const bytes = frameBytes(name, p.frameEncoding, frame, o.hex ?? false);
  if (o.udp) {
    if (!p.decodeDatagram) throw new Error(`${name} has no UDP transport`);
    return present(p.decodeDatagram(bytes, ctx));
  }
  if (!p.decode) throw new Error(`${name} has no TCP decoder`);
  return present(p.decode(bytes, ctx));
}

function contextOf(o: DecodeOptions): DecodeContext {
  return {
    now: o.now,
    transport: o.udp ? 'udp' : 'tcp',
    checksum: 'accept',
    session: {},
    ...(o.model !== undefined && { model: o.model }),
    ...(o.options && Object.keys(o.options).length > 0 && { options: o.options }),
  };
}

/** Decodes one frame on a session of its own; a frame it cannot read throws (ProtocolError). */
export function decodeFrame(name: string, frame: string, o: DecodeOptions): DecodedFrame {
  return decodeOn(protocolOf(name, o), frame, o, contextOf(o));
}

/**
 * Decodes several frames in order on one session, as one connection (or one UDP peer) carries
 * them: a frame that names its device names it for the frames after it, as a login does
 * (DecodeContext.deviceId). A frame it cannot read gets an UndecodedFrame with the reason, and
 * the frames after it are still decoded. An unknown protocol or setting throws before any frame.
 */
export function decodeFrames(
  name: string,
  frames: readonly string[],
  o: DecodeOptions,
): (DecodedFrame | UndecodedFrame)[] {
  const p = protocolOf(name, o);
  const ctx = contextOf(o);
  return frames.map((frame) => {
    try {
      const decoded = decodeOn(p, frame, o, ctx);
      if (decoded.identity !== undefined) ctx.deviceId = decoded.identity;
      return decoded;
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e;
      return { messages: [], replies: [], error: e.message.split('\n')[0] };
    }
  });
}
