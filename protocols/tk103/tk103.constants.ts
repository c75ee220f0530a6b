import type { Alarm } from '../../core/model/alarm.js';

/**
 * Layouts and tables read from Traccar `Tk103ProtocolDecoder.java`, `Tk103FrameDecoder.java` and
 * `Tk103ProtocolEncoder.java` (docs/protocols.md §3.12): the `(<12-char id><4-char command><data>)`
 * dialect and its comma form `(<imei>,<command>,...)`.
 */
export const PROTOCOL = 'tk103';

/** Tk103FrameDecoder discards an unfinished frame past 1,024 bytes */
export const TK103_MAX_FRAME_BYTES = 1024;

// Replies (Tk103ProtocolDecoder.decode; BO01's from the TK103 protocol's "alarm message / AS01 response")
export const replyHandshake = (id: string): string => `(${id}AP01HSO)`;
export const replyLogin = (id: string): string => `(${id}AP05)`;
export const replyAlarm = (id: string, alarm: string): string => `(${id}AS01${alarm})`;

/** BO01 alarm digit -> alarm, Tk103ProtocolDecoder.decodeAlarm */
export const BO01_ALARMS: Readonly<Record<string, Alarm>> = {
  1: 'accident',
  2: 'sos',
  3: 'vibration',
  4: 'lowspeed',
  5: 'overspeed',
  6: 'geofenceExit',
};

/** BQ81 `,ALARM,<n>` -> alarm, Tk103ProtocolDecoder.decodeType */
export const BQ81_ALARMS: Readonly<Record<string, Alarm>> = {
  0: 'lowBattery',
  1: 'overspeed',
  2: 'idle',
  3: 'hardAcceleration',
  4: 'hardBraking',
  5: 'temperature',
};

/** ZC1x / DW3x / DW5x command -> alarm, Tk103ProtocolDecoder.decodeType */
export const TYPE_ALARMS: Readonly<Record<string, Alarm>> = {
  ZC11: 'movement',
  DW31: 'movement',
  DW51: 'movement',
  ZC12: 'lowBattery',
  DW32: 'lowBattery',
  DW52: 'lowBattery',
  ZC13: 'powerCut',
  DW33: 'powerCut',
  DW53: 'powerCut',
  ZC17: 'removing',
  DW37: 'removing',
  DW57: 'removing',
  ZC25: 'sos',
  DW3E: 'sos',
  DW5E: 'sos',
  ZC26: 'tampering',
  DW3F: 'tampering',
  DW5F: 'tampering',
  ZC27: 'lowPower',
  DW40: 'lowPower',
  DW60: 'lowPower',
};

/** commands that report the ignition: on, off */
export const IGNITION_ON: ReadonlySet<string> = new Set(['ZC15', 'DW35', 'DW55', 'ZC29', 'DW42', 'DW62']);
export const IGNITION_OFF: ReadonlySet<string> = new Set(['ZC16', 'DW36', 'DW56']);

/** ZC20 battery level code -> %, Tk103ProtocolDecoder.decodeBattery */
export const BATTERY_LEVELS: Readonly<Record<number, number>> = { 6: 100, 5: 80, 4: 50, 3: 20, 2: 10 };

const X = '[0-9A-Fa-f]';

/**
 * Position (Tk103ProtocolDecoder PATTERN). Traccar ends it with a greedy `.*`, so its optional
 * temperature never matches; a lazy one lets it.
 */
export const PATTERN_POSITION = new RegExp(
  [
    '^\\(?',
    '(?:(.{12})|([^,]+),)', // 1 id (12 chars), 2 id (comma form)
    '(.{4}),?', // 3 command
    '(?:(\\d*)|,ALARM,(\\d),\\d+,)', // 4 data, 5 BQ81 alarm
    '(\\d{2})(\\d{2})(\\d{2}),?', // 6-8 date: yyMMdd, comma form ddMMyy
    '([AV]),?', // 9 validity
    ' *(\\d*)(\\d{2}\\.\\d+)([NS]),?', // 10-12 latitude
    ' *(\\d*)(\\d{2}\\.\\d+)([EW]),?', // 13-15 longitude
    '([ \\d.]{1,5})(?:\\d*,)?', // 16 speed km/h
    '(\\d{2})(\\d{2})(\\d{2}),?', // 17-19 time hhmmss
    '(?:',
    `(?:([ \\d.]{6})|(\\d{2})),?`, // 20-21 course
    '([01])([01])', // 22 charge (0 = charging), 23 ignition
    `(${X})(${X})(${X})`, // 24-26 io masks
    `(${X}{3})`, // 27 fuel
    `L(${X}+)`, // 28 odometer m
    '|(\\d+\\.\\d+))', // 29 course
    '.*?',
    '([+-]\\d{3}\\.\\d)?', // 30 temperature
    '\\)?$',
  ].join(''),
  's', // Traccar's patterns are DOTALL
);

/** ZC20 battery report (PATTERN_BATTERY) */
export const PATTERN_BATTERY = /^\(?(\d+),ZC20,(\d{2})(\d{2})(\d{2}),(\d{2})(\d{2})(\d{2}),(\d+),(\d+),(\d+),\d+/;

/** `{mcc,mnc,lac,cid}` cell list (PATTERN_CELL) */
export const PATTERN_CELL = /^\((\d{12}).{4}(?:\d{15})?,([^)]+),(\d{8})\)$/;

/** BZ00 serving cell (PATTERN_NETWORK) */
export const PATTERN_NETWORK = new RegExp(`^\\(?(\\d{12})BZ00,(\\d+),(\\d+),(${X}+),(${X}+),`);

/** DW5x LBS and Wi-Fi report (PATTERN_LBSWIFI) */
export const PATTERN_LBS_WIFI = new RegExp(
  `^\\(?(\\d+),(.{4}),(\\d+),(\\d+),(\\d+),(\\d+),(\\d+),((?:(?:${X}{2}:){5}${X}{2}\\*[-+]?\\d+\\*\\d+,)*)(\\d{2})(\\d{2})(\\d{2}),(\\d{2})(\\d{2})(\\d{2})`,
);

/** ZC03 free-text command result (PATTERN_COMMAND_RESULT) */
export const PATTERN_COMMAND_RESULT = /^\(?(\d+),.{4},(\d{2})(\d{2})(\d{2}),(\d{2})(\d{2})(\d{2}),\$([\s\S]*?)(?:\$|$)/;

/** BV00 vehicle identification number (PATTERN_VIN) */
export const PATTERN_VIN = /^\((\d+)BV00(.{17})\)$/;
