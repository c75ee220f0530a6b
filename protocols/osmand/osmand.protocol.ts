import type { ProtocolModule } from '../types.js';
import { MAX_BODY_BYTES } from './osmand.constants.js';
import { decodeOsmAndFrame, decodeOsmAndHttp } from './osmand.decoder.js';

/**
 * OsmAnd / Traccar Client over HTTP (Traccar `OsmAndProtocolDecoder`): a query-string GET or form
 * POST (`id`, `lat`, `lon`, `timestamp`, `speed` in knots, …), or a Transistorsoft JSON POST.
 *
 * The HTTP endpoint calls `decodeHttp(request, ctx)` and answers with `status` once the messages are
 * stored (200, empty body) or at once for a 400. There is no splitter: HTTP does the framing.
 *
 * `trackgate decode --protocol osmand FRAME` (frameEncoding 'http') passes FRAME to `decode` as its
 * UTF-8 bytes: a URL path and query like `/?id=123&lat=…&lon=…`, a bare query, a JSON body, or a
 * whole raw HTTP request. A request that would get 400 throws ProtocolError (exit 1). The
 * `tcp` transport is not offered: `decode` exists for captured requests only.
 *
 * The query `speed` is always knots (Traccar's `osmand.speed` default, what Traccar Client sends):
 * no request says otherwise, so a per-server unit would be right for some apps and wrong for others.
 */
export const osmandProtocol: ProtocolModule = {
  name: 'osmand',
  transports: ['http'],
  maxFrameBytes: MAX_BODY_BYTES,
  frameEncoding: 'http',
  decodeHttp: decodeOsmAndHttp,
  decode: decodeOsmAndFrame,
};
