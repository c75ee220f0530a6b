/**
 * Layouts of Navtelecom's NTCB and FLEX ("Protocol of information exchange" v6.x, sections on
 * the NTCB header, the *>S / *>FLEX exchange and the FLEX packets; docs/protocols/navis.md), as
 * Traccar's NavisProtocolDecoder and NavisFrameDecoder read them.
 */
export const PROTOCOL = 'navis';

/** NTCB header: 4-char prefix, receiver u32 LE, sender u32 LE, body length u16 LE, body XOR, header XOR */
export const NTCB_HEADER_BYTES = 16;
export const NTCB_LENGTH_OFFSET = 12;
export const NTCB_BODY_XOR_OFFSET = 14;
export const NTCB_HEADER_XOR_OFFSET = 15;
/** the largest NTCB frame: a header and a body of u16 length */
export const NTCB_MAX_FRAME_BYTES = NTCB_HEADER_BYTES + 0xffff;

/** a lone 0x7F between frames: the device's keep-alive */
export const KEEP_ALIVE = 0x7f;
export const NTCB_START = 0x40; // '@'
export const FLEX_START = 0x7e; // '~'

// NTCB message types (the first 3 body bytes), manual "NTCB commands"
export const NTCB_HANDSHAKE = '*>S';
export const NTCB_ARRAY = '*>A';
export const NTCB_SINGLE = '*>T';
/** "*>FLEX": the first 3 bytes select it, "LEX" follows */
export const NTCB_FLEX = '*>F';
export const NTCB_FLEX_TAIL_BYTES = 3;
/** a device's answer to a command (`*@C...`) */
export const NTCB_COMMAND_ANSWER = '*@C';

/** the protocol byte of *>FLEX that selects FLEX */
export const FLEX_PROTOCOL = 0xb0;

// FLEX packet types, manual "FLEX data packets": two ASCII bytes then the content, CRC-8 last
export const FLEX_ARRAY = '~A';
export const FLEX_SINGLE = '~T';
export const FLEX_CURRENT = '~C';
/** FLEX 2.0 extra packets: records of their own length */
export const FLEX_EXTRA_ARRAY = '~E';
export const FLEX_EXTRA_SINGLE = '~X';
export const FLEX_HEADER_BYTES = 2;
export const FLEX_CRC_BYTES = 1;

/**
 * Bytes of each FLEX field, by field index (field number - 1), for FLEX 1.0 (0-68), 2.0 (69-121)
 * and 3.0 (122-254): the table Traccar's FLEX_FIELDS_SIZES holds. A record is the fields whose bit
 * is set in the negotiated bitfield, in index order, with no separators.
 */
export const FLEX_FIELD_BYTES: readonly number[] = [
  // FLEX 1.0
  4, 2, 4, 1, 1, 1, 1, 1, 4, 4, 4, 4, 4, 2, 4, 4, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 4, 4, 2, 2, 4, 2, 2,
  2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 2, 1, 4, 2, 2, 2, 2, 2, 1, 1, 1, 2, 4, 2, 1,
  // FLEX 2.0
  8, 2, 1, 16, 4, 2, 4, 37, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 6, 12, 24, 48, 1, 1, 1, 1, 4, 4, 1, 4, 2, 6,
  2, 6, 2, 2, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 1,
  // FLEX 3.0
  1, 1, 1, 1, 4, 4, 4, 4, 4, 4, 2, 2, 2, 2, 2, 2, 1, 1, 2, 3, 2, 1, 1, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
  2, 2, 2, 2, 2, 1, 1, 1, 1, 2, 4, 4, 4, 2, 4, 2, 2, 4, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 4, 4, 4, 4, 6, 3, 1, 2,
  2, 1, 4, 5, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 4, 4,
  4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 8, 8, 8,
];

/** the largest FLEX record (every field) and so the largest ~A packet: 255 such records */
const FLEX_MAX_RECORD_BYTES = FLEX_FIELD_BYTES.reduce((a, b) => a + b, 0);
export const MAX_FRAME_BYTES = Math.max(
  NTCB_MAX_FRAME_BYTES,
  FLEX_HEADER_BYTES + 1 + 255 * FLEX_MAX_RECORD_BYTES + FLEX_CRC_BYTES,
);

/** the first byte of a FLEX 2.0 extra record's content (Traccar skips records without it) */
export const FLEX_EXTRA_TAG = 0x0a;

// NTCB telemetry formats (the record's first byte or u16), manual "NTCB telemetry formats"
export const F10 = 0x01;
export const F20 = 0x02;
export const F30 = 0x03;
export const F40 = 0x04;
export const F50 = 0x05;
export const F51 = 0x15;
export const F52 = 0x25;
export const F60 = 0x06;

/** FLEX latitude/longitude unit: 1/10000 minute */
export const FLEX_DEGREE_UNITS = 600_000;

// Session keys, written only by this decoder
/** the IMEI of *>S */
export const SESSION_IMEI = 'navis.imei';
/** the negotiated FLEX layout (FlexLayout) */
export const SESSION_FLEX = 'navis.flex';

/** the device setting naming the FLEX record size (Traccar NavisFrameDecoder.setFlexDataSize) */
export const OPTION_FLEX_DATA_SIZE = 'flexDataSize';
