/**
 * Facts from Traccar `FlespiProtocolDecoder.java` / `FlespiProtocol.java` and flespi's public
 * documentation (https://flespi.com/protocols/http: a POST whose body is a JSON array of message
 * objects, each with an `ident`; the flespi message parameter registry for the names).
 */
export const PROTOCOL = 'flespi';

export const STATUS_OK = 200;
export const STATUS_BAD_REQUEST = 400;

/**
 * A request body larger than this is refused (413): a stream sends all the messages it has
 * accumulated at once, so batches are larger than one OsmAnd report; flespi's `limit_messages`
 * stream option keeps them under it.
 */
export const MAX_BODY_BYTES = 1024 * 1024;
/** messages taken from one request */
export const MAX_MESSAGES = 10_000;
/** attributes kept from one message's parameters the reference has no name for */
export const MAX_ATTRIBUTES = 200;
