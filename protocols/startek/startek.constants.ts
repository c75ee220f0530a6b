import type { Alarm } from '../../core/model/alarm.js';

/**
 * Layouts and tables of the iStartek text protocol (VT100/VT200/PT60 series), as read from Traccar's
 * `StartekProtocolDecoder.java`, `StartekFrameDecoder.java` and `StartekProtocolEncoder.java`
 * (docs/protocols/startek.md).
 */
export const PROTOCOL = 'startek';

/** the longest frame seen is a 710 block of about 560 bytes; the length field has room for more */
export const MAX_FRAME_BYTES = 8192;

/** `&&`, the index character, then the decimal length up to the first comma */
export const FRAME_START = '&&';
export const LENGTH_OFFSET = 3;
/** the shortest frame the length can be read from (StartekFrameDecoder) */
export const MIN_HEADER_BYTES = 10;
/** the length counts from the comma after it; the checksum (2) and CR LF (2) follow what it counts */
export const TRAILER_BYTES = 4;
/** at most this many length digits: more is not a frame header */
export const MAX_LENGTH_DIGITS = 5;

// Command codes of the device's messages (manual "GPS Tracker Communication Protocol", command list)
/** 000: position and event report */
export const CMD_REPORT = '000';
/** 710: extended (CAN / J1939) data, one `Tn,...` line each */
export const CMD_SERIAL = '710';

/** event 53: the event data is the driver's id (RFID / iButton), not an alarm */
export const EVENT_DRIVER_ID = 53;

/** event code -> alarm (StartekProtocolDecoder.decodeAlarm) */
export const EVENT_ALARMS: Readonly<Record<number, Alarm>> = {
  1: 'sos',
  5: 'door',
  6: 'door',
  17: 'lowPower',
  18: 'powerCut',
  19: 'powerRestored',
  39: 'hardAcceleration',
  40: 'hardBraking',
  41: 'hardCornering',
};

/** the index character the server's commands carry (StartekProtocolEncoder) */
export const COMMAND_INDEX = ':';
