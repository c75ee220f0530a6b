/**
 * Layouts and codes of the Eelink tracker protocol, as Traccar's EelinkProtocolDecoder reads them:
 * packets `67 67 | u8 type | u16 length | u16 index | content` (the length counts the index and
 * the content). Old types 0x01-0x08 ("GPS Vehicle Tracker Communication Protocol"), new types
 * 0x12-0x19 (Eelink "Device Protocol V2.0/V2.1"). UDP datagrams wrap packets in an "EL" envelope.
 */
export const PROTOCOL = 'eelink';

/** a packet's length field is u16: 5 + 65535 at most (Traccar: 1 KiB frames; photos come in parts) */
export const MAX_FRAME_BYTES = 5 + 0xffff;
export const MARK = 0x67;
/** mark, type, length */
export const PACKET_HEADER_BYTES = 5;
/** "EL", u16 length, u16 checksum, 8-byte IMEI */
export const ENVELOPE_HEADER_BYTES = 2 + 2 + 2 + 8;
export const IMEI_BYTES = 8;

// Old protocol
export const MSG_LOGIN = 0x01;
export const MSG_GPS = 0x02;
export const MSG_HEARTBEAT = 0x03;
export const MSG_ALARM = 0x04;
export const MSG_STATE = 0x05;
export const MSG_SMS = 0x06;
export const MSG_OBD = 0x07;
export const MSG_DOWNLINK = 0x80;
export const MSG_DATA = 0x81;

// New protocol (V2.x)
export const MSG_NORMAL = 0x12;
export const MSG_WARNING = 0x14;
export const MSG_REPORT = 0x15;
export const MSG_COMMAND = 0x16;
export const MSG_OBD_DATA = 0x17;
export const MSG_OBD_BODY = 0x18;
export const MSG_OBD_CODE = 0x19;

/** the login answer's protocol version and action mask */
export const LOGIN_PROTOCOL_VERSION = 1;
export const LOGIN_ACTION_MASK = 0;

/** the downlink (0x80) content: command kind "1", then a u32 server id, then the command text */
export const DOWNLINK_COMMAND = 0x01;

/** Session key (this decoder's own): the IMEI of the "EL" envelope a UDP sender last wrote, for the encoder */
export const SESSION_ENVELOPE_IMEI = 'eelink.envelopeImei';
