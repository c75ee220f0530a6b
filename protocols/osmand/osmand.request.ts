import { ProtocolError, type HttpRequestLike } from '../types.js';

const REQUEST_LINE = /^([A-Z]+) (\S+) HTTP\/\d(\.\d)?\r?\n/;

/**
 * Reads a captured OsmAnd request given as one FRAME (for `trackgate decode` and `decode()`):
 * - a raw HTTP/1.x request: `GET /?id=1&lat=… HTTP/1.1\r\nHeader: v\r\n\r\nbody`;
 * - a JSON body `{"device_id": …}`, taken as `POST /` with `Content-Type: application/json`;
 * - a URL path and query `/?id=1&lat=…`, or a bare query `id=1&lat=…`, taken as `GET`.
 */
export function requestFromFrame(frame: Buffer): HttpRequestLike {
  const text = frame.toString('utf8');
  const line = REQUEST_LINE.exec(text);
  if (line) return parseRawRequest(frame, text, line);
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    return { method: 'POST', url: '/', headers: { 'content-type': 'application/json' }, body: Buffer.from(trimmed) };
  }
  if (!trimmed) throw new ProtocolError('osmand', 'empty request', frame);
  const url = trimmed.startsWith('/') ? trimmed : trimmed.startsWith('?') ? `/${trimmed}` : `/?${trimmed}`;
  return { method: 'GET', url, headers: {}, body: Buffer.alloc(0) };
}

function parseRawRequest(frame: Buffer, text: string, line: RegExpExecArray): HttpRequestLike {
  const headerEnd = text.search(/\r?\n\r?\n/);
  const head = headerEnd < 0 ? text : text.slice(0, headerEnd);
  const headers: Record<string, string> = {};
  for (const h of head.split(/\r?\n/).slice(1)) {
    const colon = h.indexOf(':');
    if (colon > 0) headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim();
  }
  let body: Buffer = Buffer.alloc(0);
  if (headerEnd >= 0) {
    const separator = /\r?\n\r?\n/.exec(text.slice(headerEnd))![0];
    const offset = Buffer.byteLength(text.slice(0, headerEnd + separator.length), 'utf8');
    body = frame.subarray(Math.min(offset, frame.length));
  }
  return { method: line[1], url: line[2], headers, body };
}
