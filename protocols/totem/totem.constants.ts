import type { Alarm } from '../../core/model/alarm.js';

/**
 * Layouts and tables of the Totem AT03/AT05/AT07/AT09 protocol, read from Traccar's
 * TotemProtocolDecoder, TotemFrameDecoder and TotemProtocolEncoder (docs/protocols/totem.md).
 */
export const PROTOCOL = 'totem';

/** The most a 4-digit length field can announce. */
export const TOTEM_MAX_FRAME_BYTES = 9999;

/** Answer to every old-format frame. */
export const ACK_OLD = 'ACK OK\r\n';
/** Start of the answer to a new-format frame; its serial and XOR follow. */
export const ACK_NEW_PREFIX = '$$0014AA';

const HEX = '[0-9a-fA-F]';

/** New format `$$<4-digit length><2-hex type><imei>|`: 1 type, 2 imei. */
export const NEW_HEAD = /^\$\$\d{4}([0-9a-fA-F]{2})(\d+)\|/;
/** Old format `$$<2-hex length><imei>|`: 1 imei. */
export const OLD_HEAD = /^\$\$[0-9a-fA-F]{2}(\d+)\|/;

/**
 * New-format position (types AA, AB and the alarms): 1 imei, 2 status (8 hex), 3-8 yymmddhhmmss,
 * 9-10 battery (V x 10) and external power (V), or 11 battery (V x 100); 12-15 adc 1-4, 16-17
 * temperatures 1-2; 18-19 lac, cid (hex); 20-21 mnc, mcc; 22 satellites, 23 GSM signal, 24 course,
 * 25 speed km/h, 26 hdop, 27 odometer km, 28-30 latitude, 31-33 longitude; then an optional
 * temperature, the 4-digit serial and the XOR.
 */
export const PATTERN_NEW = new RegExp(
  [
    `^\\$\\$\\d{4}${HEX}{2}(\\d+)\\|`,
    `(${HEX}{8})`,
    '(\\d{2})(\\d{2})(\\d{2})(\\d{2})(\\d{2})(\\d{2})',
    '(?:(\\d{2})(\\d{2})|(\\d{3}))',
    '(\\d{4})',
    '(?:(?:(\\d{4})(\\d{4})(\\d{4}))?(\\d{4})(\\d{4})?)?',
    `(${HEX}{4})(${HEX}{4})`,
    '(?:(\\d{2})(\\d{3}))?',
    '(\\d{2})(\\d{2})(\\d{3})(\\d{3})(\\d{2}\\.\\d)(\\d{7})',
    '(\\d{2})(\\d{2}\\.\\d{4})([NS])',
    '(\\d{3})(\\d{2}\\.\\d{4})([EW])',
    `(?:\\d{4})?\\d{4}${HEX}{2}.*$`,
  ].join(''),
  's',
);

/** E2 (RFID): 1 imei, 2-7 yymmddhhmmss, 8 longitude, 9 latitude, 10 the card id. */
export const PATTERN_E2 = new RegExp(
  `^\\$\\$\\d{4}${HEX}{2}(\\d+)\\|(\\d{2})(\\d{2})(\\d{2})(\\d{2})(\\d{2})(\\d{2}),(-?\\d+\\.\\d+),(-?\\d+\\.\\d+),(.+)\\|${HEX}{2}.*$`,
  's',
);

/**
 * E5 (OBD): 1 imei, 2-7 yymmddhhmmss, 8 longitude, 9 latitude, then after the OBD version 10
 * odometer, 11 fuel used, 12 fuel consumption, 13 power mV, 14 rpm, 15 speed, 16 intake flow, 17
 * intake pressure, 18 coolant temperature, 19 intake temperature, 20 engine load, 21 throttle, 22 fuel.
 */
export const PATTERN_E5 = new RegExp(
  `^\\$\\$\\d{4}${HEX}{2}(\\d+)\\|(\\d{2})(\\d{2})(\\d{2})(\\d{2})(\\d{2})(\\d{2}),(-?\\d+\\.\\d+),(-?\\d+\\.\\d+),[^,]*,${'(\\d+),'.repeat(13)}\\|${HEX}{2}.*$`,
  's',
);

/**
 * Old format with an RMC sentence (AT07/AT09): 1 imei, 2 alarm code, 3-5 hhmmss, 6 validity, 7-9
 * latitude, 10-12 longitude, 13 speed knots, 14 course, 15-17 ddmmyy, 18-20 pdop, hdop, vdop, 21
 * io bits, 22 battery (V x 100), 23 power, 24 adc, 25-26 lac, cid, 27 temperature, 28 odometer km.
 */
export const PATTERN_RMC = new RegExp(
  [
    `^\\$\\$${HEX}{2}(\\d+)\\|(..)\\$GPRMC,`,
    '(\\d{2})(\\d{2})(\\d{2})\\.\\d+,([AV]),',
    '(\\d+)(\\d{2}\\.\\d+),([NS]),(\\d+)(\\d{2}\\.\\d+),([EW]),',
    '(\\d+\\.?\\d*)?,(\\d+\\.?\\d*)?,(\\d{2})(\\d{2})(\\d{2})',
    `[^*]*\\*${HEX}{2}\\|`,
    '(\\d+\\.\\d+)\\|(\\d+\\.\\d+)\\|(\\d+\\.\\d+)\\|(\\d+)\\|',
    '\\d+\\|\\d(\\d{3})(\\d{4})\\|(?:(\\d+)\\|)?',
    `${HEX}*(${HEX}{4})(${HEX}{4})\\|`,
    '(\\d+)\\|(\\d+\\.\\d+)\\|\\d+\\|',
    `.*${HEX}{4}.*$`,
  ].join(''),
  's',
);

/**
 * Old format, `|`-separated: 1 imei, 2 alarm code, 3-5 ddmmyy, 6-8 hhmmss, 9 validity, 10-12
 * latitude, 13-15 longitude, 16 speed knots, 17 course, 18 hdop, 19 io bits, 20 battery (V x 10),
 * 21 power, 22 adc, 23-24 lac, cid, 25 temperature, 26 odometer km; the same group order as PATTERN_RMC
 * from 18 on but without pdop and vdop.
 */
export const PATTERN_PIPES = new RegExp(
  [
    `^\\$\\$${HEX}{2}(\\d+)\\|(..)`,
    '(\\d{2})(\\d{2})(\\d{2})(\\d{2})(\\d{2})(\\d{2})\\|([AV])\\|',
    '(\\d+)(\\d{2}\\.\\d+)\\|([NS])\\|(\\d+)(\\d{2}\\.\\d+)\\|([EW])\\|',
    '(\\d+\\.\\d+)?\\|(\\d+)?\\|(\\d+\\.\\d+)\\|(\\d+)\\|',
    '\\d(\\d{2})(\\d{2})\\|(\\d+)\\|',
    `(${HEX}{4})(${HEX}{4})\\|`,
    `(\\d+)\\|(\\d+\\.\\d+)\\|\\d+\\|${HEX}{4}.*$`,
  ].join(''),
  's',
);

/**
 * Old format, fixed-width: 1 imei, 2 alarm code, 3-8 ddmmyyhhmmss, 9 io (hex), 10 battery (V x 10),
 * 11 power, 12-13 adc 1-2, 14-15 temperatures, 16-17 lac, cid, 18 validity, 19 satellites, 20
 * course, 21 speed knots, 22 pdop, 23 odometer km, 24-26 latitude, 27-29 longitude.
 */
export const PATTERN_FIXED = new RegExp(
  [
    `^\\$\\$${HEX}{2}(\\d+)\\|(..)`,
    '(\\d{2})(\\d{2})(\\d{2})(\\d{2})(\\d{2})(\\d{2})',
    `(${HEX}{4})[01](\\d{2})(\\d{2})(\\d{4})(\\d{4})(\\d{3})(\\d{3})`,
    `(${HEX}{4})(${HEX}{4})([AV])(\\d{2})(\\d{3})(\\d{3})(\\d{2}\\.\\d)(\\d{7})`,
    '(\\d{2})(\\d{2}\\.\\d{4})([NS])(\\d{3})(\\d{2}\\.\\d{4})([EW])',
    `\\d{4}${HEX}{4}.*$`,
  ].join(''),
  's',
);

/** Old-format alarm codes (TotemProtocolDecoder.decodeAlarm123). */
export const OLD_ALARMS: Readonly<Record<number, Alarm>> = {
  0x01: 'sos',
  0x10: 'lowBattery',
  0x11: 'overspeed',
  0x30: 'parking',
  0x42: 'geofenceExit',
  0x43: 'geofenceEnter',
};

/** New-format message types that are alarms (TotemProtocolDecoder.decodeAlarm4). */
export const NEW_ALARMS: Readonly<Record<number, Alarm>> = {
  0x01: 'sos',
  0x02: 'overspeed',
  0x04: 'geofenceExit',
  0x05: 'geofenceEnter',
  0x06: 'tow',
  0x07: 'gpsAntennaCut',
  0x10: 'powerCut',
  0x11: 'powerRestored',
  0x12: 'lowPower',
  0x13: 'lowBattery',
  0x40: 'vibration',
  0x41: 'idle',
  0x42: 'hardAcceleration',
  0x43: 'hardBraking',
};

/** New-format status bits (counted from the most significant of 32) that raise an alarm. */
export const NEW_STATUS_ALARMS: ReadonlyArray<readonly [number, Alarm]> = [
  [1, 'sos'],
  [3, 'overspeed'],
  [5, 'geofenceExit'],
  [6, 'geofenceEnter'],
  [7, 'gpsAntennaCut'],
];

/** New-format message types with a layout of their own. */
export const TYPE_RFID = 0xe2;
export const TYPE_OBD = 0xe5;
