/**
 * Wialon IPS (Gurtam "Wialon IPS communication protocol" v1.1, v2.0 and v2.1; docs/protocols/wialon.md).
 * Every packet is `#TYPE#message` and a CR LF; over UDP the IPS 2.0 datagram puts `<version>;<IMEI>`
 * (v1.1: `<IMEI>`) in front of the first `#`.
 */
export const PROTOCOL = 'wialon';

/** the longest line Traccar's WialonProtocol takes (MAX_FRAME_LENGTH_LARGE) */
export const MAX_FRAME_BYTES = 32 * 1024;

/** packet types (IPS 2.0 "Packet types" table) */
export const TYPE_LOGIN = 'L';
export const TYPE_PING = 'P';
export const TYPE_SHORT_DATA = 'SD';
export const TYPE_DATA = 'D';
export const TYPE_BLACK_BOX = 'B';
export const TYPE_MESSAGE = 'M';

/** `[<version>;][<IMEI>]#<type>#<message>` (the UDP prefix, or none on TCP) */
export const PACKET = /^(?:(\d\.\d);)?([^#]+)?#([^#]+)#(.*)$/;

const NUMBER = String.raw`\d+\.?\d*`;

/**
 * The data fields of SD, D and every black-box record (IPS 2.0 "Short data packet" and "Data
 * packet"), each `NA` when unknown: date ddmmyy; time hhmmss; lat ddmm.mm; N|S; lon dddmm.mm; E|W;
 * speed km/h; course; altitude m; satellites; then, in D only: hdop; inputs; outputs; adc
 * (comma-separated); iButton; params. Whatever follows (the IPS 2.0 CRC) is not a field.
 */
export const DATA_FIELDS = new RegExp(
  [
    String.raw`^(?:NA|(\d\d)(\d\d)(\d\d));`,
    String.raw`(?:NA|(\d\d)(\d\d)(\d\d));`,
    String.raw`(?:NA|(\d+)(\d\d\.\d+));(?:NA|([NS]));`,
    String.raw`(?:NA|(\d+)(\d\d\.\d+));(?:NA|([EW]));`,
    `(?:NA|(${NUMBER}))?;`,
    `(?:NA|(${NUMBER}))?;`,
    `(?:NA|(-?${NUMBER}));`,
    String.raw`(?:NA|(\d+))`,
    `(?:;(?:NA|(${NUMBER}));`,
    String.raw`(?:NA|(\d+));(?:NA|(\d+));(?:NA|([^;]*));(?:NA|([^;]*));(?:NA|([^;]*)))?`,
    '.*$',
  ].join(''),
);

/** one additional parameter `NAME:TYPE:VALUE`, type 1 integer, 2 double, 3 string */
export const PARAM = /^(.*):[1-3]:(.*)$/;

/** the IPS 2.0 CRC16 field: hex, as some devices write it with a `0x` in front */
export const CRC_FIELD = /^(?:0x)?([0-9a-fA-F]{1,4})$/;

/** a data packet's acknowledgement: Traccar answers SD and D alike with `#AD#1` */
export const REPLY_DATA = '#AD#1\r\n';
export const REPLY_LOGIN = '#AL#1\r\n';
export const REPLY_PING = '#AP#\r\n';
export const REPLY_MESSAGE = '#AM#1\r\n';
export const replyBlackBox = (records: number): string => `#AB#${records}\r\n`;

/** session key: the protocol version the login named (`1.1` when it named none) */
export const SESSION_VERSION = 'wialon.version';
