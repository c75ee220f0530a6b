/**
 * `trackgate decode`: one captured frame in, `{identity?, messages, replies: [hex]}` out, nothing stored;
 * positions in `messages` use the REST names (`latitude`, `speed`, `dateTime`, ...).
 * Binary protocols take hex; text protocols take the text (a hex string is also recognised when the
 * protocol's frames are binary at times, e.g. H02 `$` frames, and `--hex` says so for any); OsmAnd
 * takes a URL path with query or a JSON body.
 */
import { getProtocol, protocols } from './index.js';
import { ProtocolError, type DecodeContext, type DecodeResult } from './types.js';
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

/** `hex`: the frame is given as hex whatever the protocol (the binary frames of text protocols: Suntech, Queclink, H02). */
export function decodeFrame(name: string, frame: string, o: { udp: boolean; now: Date; hex?: boolean }): DecodedFrame {
  const p = getProtocol(name);
  if (!p) throw new Error(`unknown protocol "${name}" (known: ${Object.keys(protocols).sort().join(', ')})`);
  const ctx: DecodeContext = { now: o.now, transport: o.udp ? 'udp' : 'tcp', checksum: 'accept', session: {} };
  if (p.decodeHttp) {
    const isJson = frame.trim().startsWith('{');
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
