/**
 * Layouts and tables read from Traccar `RuptelaProtocol.java`, `RuptelaProtocolDecoder.java` and
 * `RuptelaProtocolEncoder.java` (docs/protocols.md §3.11): Ruptela FM-Eco/Pro/Tco trackers,
 * `u16 length | u64 IMEI | u8 command | payload | CRC-16/KERMIT`.
 */
export const PROTOCOL = 'ruptela';

/** Ruptela packets are at most 1 KiB of data (file chunks are the largest) */
export const MAX_FRAME_BYTES = 2048;
/** length field, then the data it counts, then the CRC */
export const LENGTH_BYTES = 2;
export const CRC_BYTES = 2;

// Command ids, RuptelaProtocolDecoder MSG_*
export const MSG_RECORDS = 1;
export const MSG_DEVICE_CONFIGURATION = 2;
export const MSG_DEVICE_VERSION = 3;
export const MSG_FIRMWARE_UPDATE = 4;
export const MSG_SMS_VIA_GPRS_RESPONSE = 7;
export const MSG_SMS_VIA_GPRS = 8;
export const MSG_DTCS = 9;
export const MSG_IDENTIFICATION = 15;
export const MSG_HEARTBEAT = 16;
export const MSG_SET_IO = 17;
export const MSG_FILES = 37;
export const MSG_EXTENDED_RECORDS = 68;

/** records are answered with server command 0x64 (100 + 0), not 100 + 1 (RuptelaProtocolDecoder: `0002640113bc`) */
export const RECORDS_ANSWER = 0;

/** a server packet's command id is the device's plus 100 (RuptelaProtocolEncoder.encodeContent) */
export const SERVER_COMMAND_OFFSET = 100;

/** `lon`/`lat` of a record without a fix */
export const NO_COORDINATE = -0x80000000;
