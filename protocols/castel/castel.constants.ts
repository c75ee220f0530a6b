import type { Alarm } from '../../core/model/alarm.js';

/**
 * Layouts and tables of the SinoCastel OBD protocol family, read from Traccar's
 * `CastelProtocolDecoder`, `CastelProtocolEncoder` and `CastelProtocol` (docs/protocols/castel.md):
 * the "SC" OBD protocol (version 3 and 4), the older "CC" protocol (any other version) and the
 * "MPIP" variant with a `$$` header and no version byte.
 */
export const PROTOCOL = 'castel';

/** `@@`: SC and CC frames, and every reply the server sends */
export const HEADER_AT = 0x4040;
/** `$$`: MPIP frames (no version byte) */
export const HEADER_DOLLAR = 0x2424;

/** header (2), length (2), device id (20), type (2) before the body; CRC (2) and CR LF after it */
export const ID_BYTES = 20;
export const TRAILER_BYTES = 4;
/** the shortest frame: a `$$` frame with an empty body */
export const MIN_FRAME_BYTES = 2 + 2 + ID_BYTES + 2 + TRAILER_BYTES;
/** the length field is 16 bits, so no frame is longer */
export const MAX_FRAME_BYTES = 0xffff;

/** SC protocol versions; any other version byte after `@@` is the CC protocol */
export const SC_VERSIONS: ReadonlySet<number> = new Set([3, 4]);
/** what Traccar writes as the version of an `@@` reply to an MPIP frame (its version -1 as a byte) */
export const MPIP_REPLY_VERSION = 0xff;
/** the version byte of a server command (CastelProtocolEncoder) */
export const COMMAND_VERSION = 1;

/** SC message types (OBD protocol v4.x, "message type" table) */
export const MSG_SC_LOGIN = 0x1001;
export const MSG_SC_LOGIN_RESPONSE = 0x9001;
export const MSG_SC_LOGOUT = 0x1002;
export const MSG_SC_HEARTBEAT = 0x1003;
export const MSG_SC_HEARTBEAT_RESPONSE = 0x9003;
export const MSG_SC_GPS = 0x4001;
export const MSG_SC_PID_DATA = 0x4002;
export const MSG_SC_G_SENSOR = 0x4003;
export const MSG_SC_SUPPORTED_PID = 0x4004;
export const MSG_SC_OBD_DATA = 0x4005;
export const MSG_SC_DTCS_PASSENGER = 0x4006;
export const MSG_SC_ALARM = 0x4007;
export const MSG_SC_CELL = 0x4008;
export const MSG_SC_GPS_SLEEP = 0x4009;
export const MSG_SC_DTCS_COMMERCIAL = 0x400b;
export const MSG_SC_FUEL = 0x400e;
export const MSG_SC_COMPREHENSIVE = 0x401f;
export const MSG_SC_AGPS_REQUEST = 0x5101;
export const MSG_SC_QUERY_RESPONSE = 0xa002;
export const MSG_SC_CURRENT_LOCATION = 0xb001;
export const MSG_SC_ALARM_RESPONSE = 0xc007;

/** CC message types */
export const MSG_CC_LOGIN = 0x4001;
export const MSG_CC_LOGIN_RESPONSE = 0x8001;
export const MSG_CC_HEARTBEAT = 0x4206;
export const MSG_CC_HEARTBEAT_RESPONSE = 0x8206;
/** CC petrol (fuel pump relay) control: 1 cuts the engine, 0 restores it */
export const MSG_CC_PETROL_CONTROL = 0x4583;

/** MPIP message types */
export const MSG_MPIP_LOGIN = 0x4001;
export const MSG_MPIP_REGISTER = 0x2001;
export const MSG_MPIP_REGISTER_RESPONSE = 0x1001;
export const MSG_MPIP_POSITION = 0x4201;
export const MSG_MPIP_ALARM = 0x4202;
export const MSG_MPIP_HEARTBEAT = 0x4206;
export const MSG_MPIP_HISTORY = 0x4204;
/** a 0x4204 frame carries 8 fixes, each followed by 31 bytes Traccar skips */
export const MPIP_HISTORY_FIXES = 8;
export const MPIP_HISTORY_GAP_BYTES = 31;

/** SC alarm numbers (alarm message 0x4007 and comprehensive tag 0x0007), CastelProtocolDecoder.decodeAlarm */
export const SC_ALARMS: Readonly<Record<number, Alarm>> = {
  0x01: 'overspeed',
  0x02: 'lowPower',
  0x03: 'temperature', // high engine temperature
  0x04: 'hardAcceleration',
  0x05: 'hardBraking',
  0x06: 'idle', // idling too long
  0x07: 'tow',
  0x08: 'highRpm',
  0x09: 'powerOn',
  0x0b: 'laneChange',
  0x0c: 'hardCornering',
  0x0d: 'fatigueDriving',
  0x0e: 'powerOff',
  0x11: 'accident',
  0x12: 'tampering',
  0x1c: 'vibration',
};
/** alarm numbers that report the ignition instead of an alarm */
export const SC_ALARM_IGNITION_ON = 0x16;
export const SC_ALARM_IGNITION_OFF = 0x17;

/** bits of the SC statistics block's u32 state (decodeStat) */
export const STATE_BIT_ACCELERATION = 4;
export const STATE_BIT_BRAKING = 5;
export const STATE_BIT_IDLE = 6;
export const STATE_BIT_IGNITION = 2 * 8 + 2;

/** comprehensive (0x401F) tags */
export const TAG_PIDS = 0x0002;
export const TAG_FAULTS = 0x0006;
export const TAG_ALARMS = 0x0007;
export const TAG_FAULTS_COMMERCIAL = 0x000b;
export const TAG_DEVICE_TEMP = 0x0010;
export const TAG_TEMP_FIRST = 0x0011;
export const TAG_TEMP_LAST = 0x0014;
export const TAG_POWER = 0x0020;
export const TAG_BATTERY = 0x0021;

/** g-sensor samples are in 1/64 g */
export const G_PER_UNIT = 0.015625;
/** coordinates are in milliseconds of arc */
export const MS_PER_DEGREE = 3_600_000;
