/**
 * Layouts read from Traccar `AtrackProtocol.java`, `AtrackFrameDecoder.java`,
 * `AtrackProtocolDecoder.java` and `AtrackProtocolEncoder.java`, and the ATrack AP/SP protocol
 * document (docs/protocols/atrack.md): ATrack AK/AX/AT trackers, binary `@P` reports, `@R` photo
 * chunks, text `@P,…` reports, `$` command answers and the 12-byte FE 02 keep-alive.
 */
export const PROTOCOL = 'atrack';

/** a binary report's u16 length field plus its 6 leading bytes is the most a binary frame holds */
export const MAX_FRAME_BYTES = 0xffff + 6;

/** FE 02 starts a keep-alive (12 bytes) and every acknowledgement */
export const KEEPALIVE_MARK = 0xfe02;
export const KEEPALIVE_BYTES = 12;

/** binary report: `@P`/`@R`, checksum u16, length u16, sequence u16, unit id u64, then records */
export const BINARY_HEADER_BYTES = 16;
/** records shorter than this end a binary report (AtrackProtocolDecoder MIN_DATA_LENGTH) */
export const MIN_RECORD_BYTES = 40;

export const AT = 0x40; // '@'
export const DOLLAR = 0x24; // '$'
export const COMMA = 0x2c;
export const CR = 0x0d;
export const LF = 0x0a;

/** DecodeContext.session key this decoder writes: the photo chunks seen so far */
export const SESSION_PHOTO = 'atrack.photo';

/** The device settings the decoder reads (DecodeContext.options), named as Traccar's setters. */
export const SETTINGS = ['custom', 'form', 'longDate', 'frameMask', 'decimalFuel', 'alarmMap'] as const;
