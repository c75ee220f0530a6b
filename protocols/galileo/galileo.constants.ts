/**
 * Layouts read from Traccar `GalileoProtocolDecoder.java`, `GalileoFrameDecoder.java` and
 * `GalileoProtocolEncoder.java`, and from the Galileosky "server exchange protocol" (docs/protocols/galileo.md):
 * `header | u16 LE length | tag records | CRC-16/MODBUS LE`.
 */
export const PROTOCOL = 'galileo';

/** header byte and length field */
export const HEAD_BYTES = 3;
export const CRC_BYTES = 2;
/** the length field's low 15 bits count the data; the top bit says the device's archive holds more */
export const LENGTH_MASK = 0x7fff;
export const ARCHIVE_FLAG = 0x8000;
/** the largest packet the 15-bit length allows */
export const MAX_FRAME_BYTES = HEAD_BYTES + LENGTH_MASK + CRC_BYTES;

// Packet headers (server exchange protocol: "packet structure")
/** head and main packets: tag records */
export const HEADER_DATA = 0x01;
/** a part of a photo */
export const HEADER_PHOTO = 0x07;
/** compressed main packet: minimal data sets with their tag lists */
export const HEADER_COMPRESSED = 0x08;

// Acknowledgement headers: the packet's checksum follows, as received
export const ACK_DATA = 0x02;
export const ACK_PHOTO = 0x07;

/**
 * An Iridium SBD message: `01 | u16 BE length | 01 00 1C` (the MO header information element:
 * id 0x01, 28 bytes), then the MO header's fields; no checksum.
 */
export const IRIDIUM_MO_HEADER = 0x01001c;
export const IRIDIUM_IMEI_BYTES = 15;

/** the IMEI tag of a data packet: 15 ASCII digits */
export const TAG_IMEI = 0x03;
export const IMEI_BYTES = 15;
/** the coordinates tag: flags byte, latitude and longitude as i32 LE millionths of a degree */
export const TAG_COORDINATES = 0x30;
/** the coordinates flags' high nibble: 0 = a valid fix */
export const COORDINATES_INVALID_MASK = 0xf0;

// Downlink command packet tags (GalileoProtocolEncoder)
export const TAG_DEVICE_ID = 0x04;
export const TAG_COMMAND_INDEX = 0xe0;
export const TAG_COMMAND_TEXT = 0xe1;
/** a command text's length is one byte */
export const MAX_COMMAND_BYTES = 255;
