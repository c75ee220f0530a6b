import type { Alarm } from '../../core/model/alarm.js';

/**
 * Layouts and tables read from Traccar `SuntechProtocol.java`, `SuntechFrameDecoder.java`,
 * `SuntechProtocolDecoder.java` and `SuntechProtocolEncoder.java` (docs/protocols.md §3.8): Suntech
 * ST300/ST340/ST4xx/ST500/ST600/ST9xx and SA200, legacy `ST300STT;…` and universal `STT;…` text
 * reports ended by CR, and binary universal reports (second byte 0).
 */
export const PROTOCOL = 'suntech';

/** the longest text report seen is a command answer of some 600 bytes; binary frames are far shorter */
export const MAX_FRAME_BYTES = 4096;

export const CR = 0x0d;
export const LF = 0x0a;
/** binary "zip" report: `02 | u16 length | … | 1 byte`, length 1 + 2 + length + 1 */
export const ZIP_MARKER = 0x02;

/** DecodeContext.session keys this decoder writes (and the encoder reads) */
export const SESSION_PREFIX = 'suntech.prefix';
export const SESSION_UNIVERSAL = 'suntech.universal';

/** The prefix of server commands until the device has named its own (SuntechProtocolEncoder). */
export const DEFAULT_COMMAND_PREFIX = 'SA200';

/** EMG emergency codes, SuntechProtocolDecoder.decodeEmergency */
export const EMERGENCY_ALARMS: Readonly<Record<number, Alarm>> = {
  1: 'sos', // panic button
  2: 'parking',
  3: 'powerCut', // main power removed
  5: 'door',
  6: 'door',
  7: 'movement',
  8: 'vibration', // shock
};

/** ALT alert ids, SuntechProtocolDecoder.decodeAlert (legacy ALT, universal ALT and binary 0x82) */
export const ALERT_ALARMS: Readonly<Record<number, Alarm>> = {
  1: 'overspeed',
  5: 'geofenceExit',
  6: 'geofenceEnter',
  14: 'lowBattery', // backup battery error
  15: 'vibration', // shocked
  16: 'accident', // collision
  40: 'powerRestored',
  41: 'powerCut',
  42: 'sos',
  46: 'hardAcceleration',
  47: 'hardBraking',
  50: 'jamming',
  132: 'door',
};

/** binary alert id whose data is an 8-byte driver id (SuntechProtocolDecoder.decodeBinary) */
export const ALERT_DRIVER_ID = 59;

/** The fixed field mask of a universal BLE report: model, version, date, time, latitude, longitude */
export const BLE_MASK = 0b1100000110110;
