import type { Alarm } from '../../core/model/alarm.js';

/**
 * Message ids. Terminal -> platform unless marked. JT/T 808-2013 (and 2019) chapter 8; vendor ids as
 * read from Traccar `Jt808ProtocolDecoder.java` (commit 9e5c458ad0bf).
 */
export const MSG = {
  TERMINAL_GENERAL_RESPONSE: 0x0001, // 8.1 terminal general response (to a platform command)
  HEARTBEAT: 0x0002, // 8.3 terminal heartbeat
  TERMINAL_LOGOUT: 0x0003, // 8.7 terminal logout
  TERMINAL_REGISTER: 0x0100, // 8.5 terminal registration
  TERMINAL_AUTH: 0x0102, // 8.8 terminal authentication
  PARAMETER_QUERY_RESPONSE: 0x0104, // 8.12 query terminal parameters response
  TERMINAL_ATTRIBUTES: 0x0107, // 8.15 query terminal attributes response
  TIME_SYNC_REQUEST: 0x0109, // vendor time sync request (Traccar)
  LOCATION_REPORT: 0x0200, // 8.18 location information report
  LOCATION_QUERY_RESPONSE: 0x0201, // 8.20 location query response
  LOCATION_BATCH_2: 0x0210, // vendor location batch (Traccar)
  HEARTBEAT_2: 0x0506, // vendor heartbeat (Traccar)
  COMMAND_RESPONSE: 0x0701, // 8.45 electronic waybill report, used for command results (Traccar)
  DRIVER_IDENTITY: 0x0702, // 8.46 driver identity report
  LOCATION_BATCH: 0x0704, // 8.48 location data bulk upload
  TRANSPARENT: 0x0900, // 8.62 uplink data pass-through
  TIMEZONE_SYNC: 0x1007, // vendor time zone sync (Traccar)
  TEXT_MESSAGE_RESPONSE: 0x1300, // vendor text response, UTF-16BE (Traccar)
  ACCELERATION: 0x2070, // vendor acceleration samples (Traccar)
  LOCATION_REPORT_2: 0x5501, // JT701 padlock location report (Traccar)
  LOCATION_REPORT_BLIND: 0x5502, // JT701 padlock blind-area report (Traccar)
  REPORT_TEXT_MESSAGE: 0x6006, // vendor text report, GBK (Traccar)
  PHOTO: 0x8888, // vendor photo notice (Traccar)
  // platform -> terminal
  GENERAL_RESPONSE: 0x8001, // 8.2 platform general response
  GENERAL_RESPONSE_2: 0x4401, // JT701 general response, one-byte serial (Traccar)
  TERMINAL_REGISTER_RESPONSE: 0x8100, // 8.6 terminal registration response
  TIME_SYNC_RESPONSE: 0x8109, // vendor time sync response (Traccar)
  TERMINAL_CONTROL: 0x8105, // 8.16 terminal control
  TEXT_MESSAGE: 0x8300, // 8.27 text message
  TRANSPARENT_DOWNLINK: 0x8900, // 8.61 downlink data pass-through
} as const;

/** 8.1 terminal general response 0x0001, result byte */
export const TERMINAL_RESULTS: Readonly<Record<number, 'ok' | 'failed' | 'badMessage' | 'unsupported'>> = {
  0: 'ok',
  1: 'failed',
  2: 'badMessage',
  3: 'unsupported',
};

/** 8.2 / 8.6 result byte: 0 success */
export const RESULT_SUCCESS = 0;
/** 8.2 general response result: 1 failure */
export const RESULT_FAILURE = 1;
/** 8.6 registration result: 4 no such terminal in the database */
export const REGISTER_NO_SUCH_TERMINAL = 4;

/** 4.4 message header: attribute bits */
export const ATTR_BODY_LENGTH_MASK = 0x03ff; // bits 0-9 body length
export const ATTR_SUBPACKAGE = 1 << 13; // bit 13: packet total/index follow the serial
export const ATTR_VERSION = 1 << 14; // bit 14: 2019 version byte, 10-byte BCD terminal id
export const ATTR_RESPONSE_REQUIRED = 1 << 15; // bit 15 (JT701 0x5501/0x5502): answer with 0x4401

/** 4.4 frame delimiters: 0x7E standard; 0xE7 alternative (Traccar `Jt808FrameDecoder`) */
export const DELIMITER = 0x7e;
export const DELIMITER_ALT = 0xe7;
/** 4.4 escaping: 7D 02 -> 7E, 7D 01 -> 7D */
export const ESCAPE = 0x7d;

/** JT/T 808 device clocks run on Beijing time unless configured otherwise (Traccar default "GMT+8") */
export const DEFAULT_UTC_OFFSET_MINUTES = 8 * 60;

/** Session keys this protocol writes (DecodeContext.session). */
export const SESSION_TERMINAL_ID = 'jt808.terminalId';
/** the 2019 protocol version byte of the terminal's last frame; absent for 2013 frames */
export const SESSION_VERSION = 'jt808.version';

/** Model families whose alarm DWORD or extras differ (Traccar `Jt808ProtocolDecoder`). */
export const PADLOCK_MODELS = new Set(['G-360P', 'G-508P']);
export const AOVX_MODELS = new Set(['AL300', 'GL100']);
export const JC_MODELS = new Set(['JC371', 'JC181', 'JC182', 'JC450', 'JC451']);
export const DOOR_MODELS = new Set(['MV810G', 'MV710G']);

/** 8.18 table 24: alarm flag DWORD, standard mapping as docs/protocols.md 3.5 gives it (bits -> canonical alarm) */
export const ALARM_BITS: ReadonlyArray<readonly [readonly number[], Alarm]> = [
  [[0], 'sos'], // emergency alarm
  [[1], 'overspeed'],
  [[2], 'fatigueDriving'],
  [[5, 6], 'gpsAntennaCut'], // GNSS antenna not connected / short circuit
  [[4, 9, 10, 11], 'fault'], // GNSS module, LCD, TTS, camera faults
  [[7, 18], 'lowBattery'], // bit 7 main power under-voltage; bit 18 as Traccar maps it
  [[8], 'powerOff'], // terminal main power off
  [[15], 'vibration'],
  [[16, 17], 'tampering'],
  [[19], 'parking'], // overtime parking
  [[20], 'geofence'], // in/out area
  [[26], 'general'],
  [[28], 'movement'], // illegal displacement
  [[29, 30], 'accident'], // collision, rollover (not on VL300)
];

/** 0xE8 extended types on Jimi JC models: alarm codes (Traccar `Jt808ProtocolDecoder`) */
export const JC_ALARMS: Readonly<Record<number, Alarm>> = {
  0x0001: 'fault',
  0x0400: 'hardAcceleration',
  0x0412: 'hardAcceleration',
  0x0401: 'hardBraking',
  0x0413: 'hardBraking',
  0x0402: 'hardCornering',
  0x0414: 'hardCornering',
  0x0403: 'overspeed',
  0x0405: 'accident',
  0x0416: 'accident',
  0x0417: 'accident',
  0x0406: 'vibration',
  0x0407: 'tow',
  0x0408: 'geofenceEnter',
  0x0409: 'geofenceExit',
  0x040c: 'door',
  0x0415: 'laneChange',
  0x0c01: 'sos',
  0x0c02: 'lowPower',
  0x0c05: 'general',
  0x0c0e: 'powerCut',
  0x0c0f: 'lowBattery',
  0x0c10: 'powerOff',
  0x0c12: 'tampering',
};

/** 0x0900 type 0xF0 subtype 0x03: alarm ids (Traccar `Jt808ProtocolDecoder.decodeTransparent`) */
export const TRANSPARENT_ALARMS: Readonly<Record<number, Alarm>> = {
  0x01: 'powerRestored',
  0x02: 'powerCut',
  0x0e: 'idle',
  0x1a: 'hardAcceleration',
  0x1b: 'hardBraking',
  0x1c: 'hardCornering',
  0x1d: 'laneChange',
  0x1e: 'laneChange',
  0x1f: 'laneChange',
  0x23: 'fatigueDriving',
  0x25: 'overspeed',
  0x26: 'accident',
  0x27: 'accident',
  0x28: 'accident',
  0x31: 'door',
  0x32: 'door',
};

/** 0x0900 type 0xF0 subtype 0x15: driving events (Traccar) */
export const TRANSPARENT_EVENTS: Readonly<Record<number, Alarm>> = {
  51: 'hardAcceleration',
  52: 'hardBraking',
  53: 'hardCornering',
  54: 'laneChange',
  56: 'accident',
};
