/**
 * Layouts read from Traccar `Minifinder2ProtocolDecoder.java`, `Minifinder2ProtocolEncoder.java` and
 * the length-field frame decoder of `Minifinder2Protocol.java` (docs/protocols/minifinder2.md):
 * `AB | flags | u16 LE length | u16 LE CRC-16/XMODEM | u16 LE sequence id | content`.
 */
export const PROTOCOL = 'minifinder2';

export const HEADER = 0xab;
/** header, flags, length, CRC and sequence id */
export const HEAD_BYTES = 8;
/** the largest frame the u16 length allows */
export const MAX_FRAME_BYTES = HEAD_BYTES + 0xffff;
/** flags bit 4: the device waits for an answer carrying the same sequence id */
export const FLAG_ACK_REQUESTED = 0x10;
/** the sequence id of every command the server sends */
export const COMMAND_SEQUENCE = 1;

// Content types (the first content byte)
export const MSG_DATA = 0x01;
export const MSG_CONFIGURATION = 0x02;
export const MSG_SERVICES = 0x03;
export const MSG_SYSTEM_CONTROL = 0x04;
export const MSG_FIRMWARE = 0x7e;
export const MSG_RESPONSE = 0x7f;

// Services a device asks for (type 0x03 keys) and the answer's value sizes
/** the position of the device as the server knows it: i32 latitude, i32 longitude, address byte */
export const SERVICE_POSITION = 0x11;
/** the current time, u32 LE UNIX seconds */
export const SERVICE_TIME = 0x12;

// Data record keys (type 0x01 and 0x03)
export const KEY_IMEI = 0x01;
export const KEY_ALARM = 0x02;
export const KEY_BATTERY = 0x14;
export const KEY_WIFI_NAMED = 0x19;
export const KEY_GPS = 0x20;
export const KEY_CELL = 0x21;
export const KEY_WIFI = 0x22;
export const KEY_BLE_POSITION = 0x23;
export const KEY_STATUS = 0x24;
export const KEY_CALL = 0x25;
export const KEY_BLE_POSITION_HDOP = 0x26;
export const KEY_POSITION = 0x27;
export const KEY_BEACON = 0x28;
export const KEY_CELL_LONG = 0x29;
export const KEY_WIFI_POSITION = 0x2a;
export const KEY_CELL_WIDE = 0x2b;
export const KEY_BEACON_BATTERY = 0x2c;
export const KEY_STEPS = 0x30;
export const KEY_ACTIVITY = 0x31;
export const KEY_BARKING = 0x37;
export const KEY_HEART_RATE = 0x40;
export const KEY_SPO2 = 0x41;
/** keys that may repeat inside one position (several beacons) */
export const REPEATABLE_KEYS: ReadonlySet<number> = new Set([KEY_BEACON, KEY_BEACON_BATTERY]);
/** system control key of a command answer: type byte, then UTF-8 text */
export const KEY_COMMAND_RESULT = 0x1f;
/** system control key of a firmware update command: the URL */
export const KEY_FIRMWARE_URL = 0x30;
/** configuration key that asks the device for all its settings */
export const KEY_CONFIG_REQUEST_ALL = 0xf0;

/** coordinates are i32 LE in 1e-7 degrees */
export const COORDINATE_SCALE = 1e7;
