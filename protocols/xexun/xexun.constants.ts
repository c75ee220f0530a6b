import type { Alarm } from '../../core/model/alarm.js';

/**
 * Layouts and tables of the Xexun TK102/TK103 text protocol, read from Traccar's
 * XexunProtocolDecoder, XexunFrameDecoder and XexunProtocolEncoder (docs/protocols/xexun.md).
 */
export const PROTOCOL = 'xexun';

/** The longest record kept waiting; real records are under 250 bytes. */
export const XEXUN_MAX_FRAME_BYTES = 2048;

/** The device setting choosing the full line format (Traccar's `xexun.extended`). */
export const SETTING_EXTENDED = 'extended';

/**
 * The RMC part and what follows it up to `imei:<digits>,` (the basic record). Groups: 1-3 time of
 * day, 4 validity, 5-7 latitude (degrees, minutes, hemisphere), 8-10 longitude, 11 speed in knots,
 * 12 course, 13-15 date ddmmyy, 16 signal F/L, 17 status text, 18 imei. Degrees may be missing
 * (`10.2368,E` is 10.2368 minutes), the longitude hemisphere too; a CR LF may follow the checksum.
 */
const RMC = [
  'G[PN]RMC,',
  '(?:(\\d{2})(\\d{2})(\\d{2}))?\\.?\\d*,', // 1-3 hhmmss[.sss]
  '([AV]),', // 4 validity
  '(\\d*?)(\\d?\\d\\.\\d+),([NS]),', // 5-7 latitude
  '(\\d*?)(\\d?\\d\\.\\d+),([EW])?,', // 8-10 longitude
  '(\\d+\\.?\\d*),', // 11 speed, knots
  '(\\d+\\.?\\d*)?,', // 12 course
  '(?:(\\d{2})(\\d{2})(\\d{2}))?,', // 13-15 ddmmyy
  '[^*]*\\*[0-9a-fA-F]{2}', // rest of the sentence, checksum
  '(?:\\r\\n)?',
  ',([FL]),', // 16 signal
  '(?:([^,]*),)?', // 17 status text (alarm)
  '.*',
  'imei:(\\d+),', // 18 imei
].join('');

/** A basic record found anywhere in a frame (the splitter may hand over the whole line). */
export const PATTERN_BASIC = new RegExp(RMC, 's');

/**
 * A full line: 1 serial (yymmddhhmmss), 2 phone number, then the RMC groups shifted by two (3-20),
 * 21 satellites, 22 altitude, 23 power in volts; anything after is not read.
 */
export const PATTERN_FULL = new RegExp(`^.*?(\\d+),([^,]+)?,${RMC}(\\d+),(-?\\d+\\.\\d+)?,[FL]:(\\d+\\.\\d+)V.*$`, 's');

/** The groups of PATTERN_BASIC inside PATTERN_FULL start after serial and phone. */
export const FULL_OFFSET = 2;

/** A line naming its device but carrying no RMC sentence (`,+4860…,,L,, imei:0122…,,,F:4.28V,…`). */
export const PATTERN_IMEI = /imei:(\d+)/;

/** The status text after the signal flag, lower-cased: an alarm (XexunProtocolDecoder.decodeStatus). */
export const STATUS_ALARMS: Readonly<Record<string, Alarm>> = {
  'help me!': 'sos',
  'help me': 'sos',
  'low battery': 'lowBattery',
  'move!': 'movement',
  'moved!': 'movement',
};

/** The status text, lower-cased: the ignition state it reports. */
export const STATUS_IGNITION: Readonly<Record<string, boolean>> = {
  'acc on': true,
  accstart: true,
  'acc off': false,
  accstop: false,
};
