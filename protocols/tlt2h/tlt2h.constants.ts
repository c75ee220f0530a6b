import type { Alarm } from '../../core/model/alarm.js';

/**
 * Layouts and tables of TLT-2H and the Xexun/MT-series trackers that speak it (docs/protocols/tlt2h.md),
 * read from Traccar's Tlt2hProtocol and Tlt2hProtocolDecoder: a header line
 * `#<IMEI>#<model>#<password>#<status>#<count>` and record lines `#<battery>[#<cell>]$GPRMC,…` or
 * `…$WIFI,…`, the message ended by `##\r\n`.
 */
export const PROTOCOL = 'tlt2h';

/** Tlt2hProtocol: CharacterDelimiterFrameDecoder(MAX_FRAME_LENGTH_LARGE = 32 KiB, "##\r\n") */
export const MAX_FRAME_BYTES = 32 * 1024;
export const FRAME_DELIMITER = '##\r\n';

/**
 * Header line (PATTERN_HEADER): IMEI, model (any text, may be empty), password (digits), then on some
 * models door (0/1), fuel voltage, power, battery and temperature (tenths), then status and the
 * record count.
 */
export const PATTERN_HEADER = /^#(\d+)#[^#]*#\d*(?:#([01])#(\d+)#(\d+)#(\d+)#(\d+))?#([^#]+)#\d+$/s;

/**
 * `$GPRMC` record (PATTERN_POSITION): `#`, a battery voltage (2 digits: tenths, 4: mV) or other hex
 * status, optionally `#mcc,mnc,lac,cid` (lac and cid hex), then `$GPRMC,hhmmss.ss,A|V|L,ddmm.mmmm,
 * N|S,dddmm.mmmm,E|W,knots,course,ddmmyy,…`; the fix part may be empty.
 */
export const PATTERN_RMC = new RegExp(
  [
    String.raw`^#(?:(\d{2}|\d{4})|[0-9a-fA-F]*)`, // 1 battery
    String.raw`(?:#(?:(\d+),(\d+),([0-9a-fA-F]+),([0-9a-fA-F]+))?)?`, // 2-5 mcc, mnc, lac, cid
    String.raw`\$GPRMC,(?:(\d{2})(\d{2})(\d{2})\.\d+)?,`, // 6-8 time
    '([AVL]),', // 9 validity
    '(?:',
    String.raw`(\d+)(\d{2}\.\d+),([NS]),`, // 10-12 latitude
    String.raw`(\d+)(\d{2}\.\d+),([EW]),`, // 13-15 longitude
    String.raw`(\d+\.?\d*)?,`, // 16 speed knots
    String.raw`(\d+\.?\d*)?,`, // 17 course
    String.raw`(\d{2})(\d{2})(\d{2})`, // 18-20 date ddmmyy
    ')?',
    '.*$',
  ].join(''),
  's',
);

/**
 * `$WIFI` record (PATTERN_WIFI): battery as above, an optional `#`, an optional cell, then
 * `$WIFI,hhmmss.ss,A|V|L,<rssi>,<mac hex>,…,ddmmyy*xx`.
 */
export const PATTERN_WIFI = new RegExp(
  [
    String.raw`^#(?:(\d{2}|\d{4})|[0-9a-fA-F]+)#?`, // 1 battery
    String.raw`(?:(\d+),(\d+),([0-9a-fA-F]+),([0-9a-fA-F]+))?`, // 2-5 mcc, mnc, lac, cid
    String.raw`\$WIFI,(\d{2})(\d{2})(\d{2})\.\d+,[AVL],`, // 6-8 time
    '(.*)', // 9 access points
    String.raw`(\d{2})(\d{2})(\d{2})\*[0-9a-fA-F]{2}$`, // 10-12 date ddmmyy
  ].join(''),
  's',
);

/** `$…*xx`: the sentence whose XOR is checked (NMEA 0183) */
export const NMEA_CHECKSUM = /\$([^*$]*)\*([0-9a-fA-F]{2})/;

/** Header status -> ignition (Tlt2hProtocolDecoder.decodeStatus) */
export const STATUS_IGNITION: Readonly<Record<string, boolean>> = {
  AUTOSTART: true,
  AUTO: true,
  AUTOSTOP: false,
  AUTOLOW: false,
};

/** Header status -> alarm: the one table of this protocol's alarms */
export const STATUS_ALARMS: Readonly<Record<string, Alarm>> = {
  TOWED: 'tow',
  SHAKE: 'vibration',
  SOS: 'sos',
  DEF: 'powerCut',
  BLP: 'lowBattery',
  CLP: 'lowPower',
  OS: 'geofenceExit',
  RS: 'geofenceEnter',
  OVERSPEED: 'overspeed',
};
