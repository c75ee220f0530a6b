/**
 * Layouts and codes of the Meiligao GPRS protocol (GT30i/GT60/VT300/VT310/VT400; vendor manual
 * "GPRS Communication Protocol Between GPS Tracker and Server" V2.x), as Traccar's
 * MeiligaoProtocolDecoder reads them: `$$ | u16 length | 7-byte BCD id | u16 command | data |
 * CRC-16/CCITT-FALSE | CR LF`; the server's frames start `@@`.
 */
export const PROTOCOL = 'meiligao';

/** the length field is u16: no frame is longer */
export const MAX_FRAME_BYTES = 0xffff;
/** `$$`, length, id, command */
export const HEADER_BYTES = 2 + 2 + 7 + 2;
/** CRC and CR LF */
export const TRAILER_BYTES = 4;
export const MIN_FRAME_BYTES = HEADER_BYTES + TRAILER_BYTES;
export const ID_BYTES = 7;
export const DEVICE_MARK = 0x24; // '$'
export const SERVER_MARK = 0x40; // '@'

// Device -> server commands (manual §4, Traccar MSG_*)
export const MSG_HEARTBEAT = 0x0001;
export const MSG_SERVER = 0x0002;
export const MSG_LOGIN = 0x5000;
export const MSG_POSITION = 0x9955;
export const MSG_POSITION_LOGGED = 0x9016;
export const MSG_ALARM = 0x9999;
export const MSG_RFID = 0x9966;
export const MSG_RETRANSMISSION = 0x6688;
export const MSG_OBD_RT = 0x9901;
export const MSG_OBD_RTA = 0x9902;
export const MSG_DTC = 0x9903;
export const MSG_UPLOAD_PHOTO = 0x0800;
export const MSG_DATA_PHOTO = 0x9988;
export const MSG_UPLOAD_COMPLETE = 0x0f80;
export const MSG_POSITION_IMAGE = 0x9977;

// Server -> device answers
export const MSG_LOGIN_RESPONSE = 0x4000;
export const MSG_UPLOAD_PHOTO_RESPONSE = 0x8801;

/** RFID frames carry 15 card numbers (u32 each) before their sentence */
export const RFID_CARDS = 15;
/** the separator of retransmitted records */
export const RECORD_SEPARATOR = 0x5c; // '\'

/** Session keys (this decoder's own): the photo being uploaded */
export const SESSION_PHOTO = 'meiligao.photo';
/**
 * trackgate keeps no images: of a photo upload only the size of each packet is counted, by packet
 * index (at most 256), so a device can make the connection hold no more than these numbers.
 * Uploads past this many bytes are reported in a warning.
 */
export const MAX_PHOTO_BYTES = 4 * 1024 * 1024;

/** The decoder settings (DecodeContext.options): the `ip:port` a server request (0x0002) is answered with. */
export const SETTING_SERVER = 'server';
