import {
  ProtocolError,
  type DecodeContext,
  type DecodeResult,
  type HttpDecodeResult,
  type HttpRequestLike,
} from '../types.js';
import { MAX_BODY_BYTES, STATUS_BAD_REQUEST, STATUS_OK } from './osmand.constants.js';
import { decodeJson, decodeQuery, type Outcome } from './osmand.messages.js';
import { requestFromFrame } from './osmand.request.js';

function header(request: HttpRequestLike, name: string): string | undefined {
  const key = Object.keys(request.headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : request.headers[key];
}

function queryOf(url: string): URLSearchParams {
  const q = url.indexOf('?');
  return new URLSearchParams(q < 0 ? '' : url.slice(q + 1).split('#')[0]);
}

/** the query string, or (none there) a form body, as Traccar reads them */
function paramsOf(request: HttpRequestLike): URLSearchParams {
  const query = queryOf(request.url);
  return [...query.keys()].length ? query : new URLSearchParams(request.body.toString('latin1'));
}

/** Transistorsoft posts `application/json`; a bare JSON body without that header is read as JSON too */
function isJson(request: HttpRequestLike): boolean {
  const type = header(request, 'content-type')?.toLowerCase() ?? '';
  if (type.startsWith('application/json')) return true;
  return ![...queryOf(request.url).keys()].length && request.body.toString('utf8').trimStart().startsWith('{');
}

/** request format -> decoder */
const FORMATS: Readonly<Record<'json' | 'query', (request: HttpRequestLike, ctx: DecodeContext) => Outcome>> = {
  json: (request) => decodeJson(request.body.toString('utf8')),
  query: (request, ctx) => decodeQuery(paramsOf(request), ctx.now),
};

/**
 * Decodes one OsmAnd / Traccar Client request: 200 with one message (several for a JSON batch)
 * when decoded; 400 when the id is missing or the coordinates cannot be read. The body of the 200
 * answer is empty (queued commands are the gateway's business), so `replies` is empty.
 */
export function decodeOsmAndHttp(request: HttpRequestLike, ctx: DecodeContext): HttpDecodeResult {
  const outcome: Outcome =
    request.body.length > MAX_BODY_BYTES
      ? { messages: [], status: STATUS_BAD_REQUEST, warnings: ['body too large'] }
      : FORMATS[isJson(request) ? 'json' : 'query'](request, ctx);
  const result: HttpDecodeResult = { messages: outcome.messages, replies: [], status: outcome.status };
  if (outcome.identity !== undefined) result.identity = outcome.identity;
  if (outcome.warnings.length) result.warnings = outcome.warnings;
  return result;
}

/**
 * One captured request as a FRAME (see `requestFromFrame`): what `trackgate decode --protocol osmand`
 * calls. A request the HTTP endpoint would answer with 400 throws ProtocolError.
 */
export function decodeOsmAndFrame(frame: Buffer, ctx: DecodeContext): DecodeResult {
  const result = decodeOsmAndHttp(requestFromFrame(frame), ctx);
  if (result.status !== STATUS_OK) {
    throw new ProtocolError(
      'osmand',
      `HTTP ${result.status}: ${result.warnings?.at(-1) ?? 'bad request'}`,
      frame.subarray(0, 32),
    );
  }
  return result;
}
