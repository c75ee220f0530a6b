import type { Alarm } from '../../core/model/alarm.js';

/**
 * Tables and layouts read from Traccar `src/main/java/org/traccar/protocol/Gps103ProtocolDecoder.java`
 * and `Gps103Protocol.java` (docs/protocols.md §3.4).
 */
export const PROTOCOL = 'gps103';

/** Gps103Protocol: CharacterDelimiterFrameDecoder(2048, false, "\r\n", "\n", ";", "*") */
export const GPS103_MAX_FRAME_BYTES = 2048;

// Replies, Gps103ProtocolDecoder.decode / decodeRegular
export const REPLY_LOGIN = 'LOAD';
export const REPLY_HEARTBEAT = 'ON';
export const replySos = (imei: string): string => `**,imei:${imei},E;`;

/** Keyword field -> alarm, Gps103ProtocolDecoder.decodeAlarm */
export const KEYWORD_ALARMS: Readonly<Record<string, Alarm>> = {
  'help me': 'sos',
  'low battery': 'lowBattery',
  stockade: 'geofence',
  move: 'movement',
  speed: 'overspeed',
  'door alarm': 'door',
  'ac alarm': 'powerCut',
  'accident alarm': 'accident',
  'sensor alarm': 'vibration',
  'bonnet alarm': 'bonnet',
  'footbrake alarm': 'footBrake',
  DTC: 'fault',
};

/** Keyword prefixes that are alarms: `T:<temp>` and `oil...` (oil1, oil2, `oil <fuel>`) */
export const KEYWORD_PREFIX_ALARMS: ReadonlyArray<readonly [string, Alarm]> = [
  ['T:', 'temperature'],
  ['oil', 'fuelLeak'],
];

/**
 * Regular report (Gps103ProtocolDecoder PATTERN):
 * `imei:<imei>,<keyword>,<yyMMddHHmm[ss]>,<rfid>,F,<hhmmss.sss>,<A|V>,<lat>,<N|S>,<lon>,<E|W>,<knots>,<course>[,alt,ign,door,fuel1%,fuel2%,temp]`
 * or `...,L,[,,<lac hex>,,<cid hex>,,,]` for LBS-only reports.
 */
export const PATTERN_REGULAR = new RegExp(
  [
    '^imei:(\\d+),', // 1 imei
    '([^,]*),', // 2 keyword
    '(?:(\\d{2})\\/?(\\d{2})\\/?(\\d{2}) ?', // 3-5 local date yyMMdd
    '(\\d{2}):?(\\d{2})(?:\\d{2})?,', // 6-7 local time HHmm[ss]
    '|\\d*,)',
    '([^,]+)?,', // 8 rfid / phone
    '(?:L,',
    '(?:,,([0-9a-fA-F]+),,([0-9a-fA-F]+),,,)?', // 9-10 lac, cid
    '|F,',
    '(?:(\\d{2})(\\d{2})(\\d{2})(?:\\.\\d+)?|(?:\\d{1,5}\\.\\d+)?),', // 11-13 UTC time
    '([AV]),', // 14 validity
    '(?:([NS]),)?(\\d+)(\\d{2}\\.\\d+),(?:([NS]),)?', // 15-18 latitude ddmm.mmmm
    '(?:([EW]),)?(\\d+)(\\d{2}\\.\\d+),(?:([EW])?,)?', // 19-22 longitude dddmm.mmmm
    '(?:(\\d+\\.?\\d*)?)?', // 23 speed knots
    '(?:,(\\d+\\.?\\d*)?)?', // 24 course
    '(?:,(-?\\d+\\.?\\d*)?)?', // 25 altitude
    '(?:,([01])?)?', // 26 ignition
    '(?:,([01])?)?', // 27 door
    '(?:,(?:(\\d+\\.\\d+)%)?,(?:(\\d+\\.\\d+)%|\\d+)?)?', // 28-29 fuel 1, fuel 2
    '(?:,([-+]?\\d+)?)?', // 30 temperature
    ').*$',
  ].join(''),
  's',
);

/** OBD report (Gps103ProtocolDecoder PATTERN_OBD) */
export const PATTERN_OBD = new RegExp(
  [
    '^imei:(\\d+),OBD,', // 1 imei
    '(\\d{2})(\\d{2})(\\d{2})(\\d{2})(\\d{2})(\\d{2}),', // 2-7 yyMMddHHmmss
    '(\\d+)?,', // 8 odometer
    '(\\d+\\.\\d+)?,', // 9 instant fuel consumption
    '(\\d+\\.\\d+)?,', // 10 average fuel consumption
    '(\\d+)?,', // 11 engine hours
    '(\\d+),', // 12 OBD speed
    '(\\d+\\.?\\d*)%,', // 13 engine load %
    '(?:([-+]?\\d+)|[-+]?),', // 14 coolant temperature
    '(\\d+\\.?\\d*)%,', // 15 throttle %
    '(\\d+),', // 16 rpm
    '(\\d+\\.\\d+),', // 17 battery V
    '([^;]*)', // 18 DTCs
    '.*$',
  ].join(''),
  's',
);

/** Alternative report ending in `*` (Gps103ProtocolDecoder PATTERN_ALT): decimal degrees, km/h */
export const PATTERN_ALT = new RegExp(
  [
    '^imei:(\\d+),', // 1 imei
    '[^,]+,',
    // Traccar uses (.+) here; [^,]+ keeps the same fields without cubic backtracking on hostile input
    '(?:-+|([^,]+)),', // 2 event
    '(?:-+|([^,]+)),', // 3 sensor id
    '(?:-+|([^,]+)),', // 4 sensor voltage
    '(\\d{2})(\\d{2})(\\d{2}),', // 5-7 HHmmss
    '(\\d{2})(\\d{2})(\\d{2}),', // 8-10 ddMMyy
    '(\\d+),', // 11 rssi
    '(\\d),', // 12 gps status
    '(-?\\d+\\.\\d+),', // 13 latitude
    '(-?\\d+\\.\\d+),', // 14 longitude
    '(\\d+),', // 15 speed km/h
    '(\\d+),', // 16 course
    '(-?\\d+),', // 17 altitude
    '(\\d+\\.\\d+),', // 18 hdop
    '(\\d+),', // 19 satellites
    '([01]),', // 20 ignition
    '([01]),', // 21 charge
    '(?:-+|(.+))', // 22 error
    '.*$',
  ].join(''),
  's',
);
