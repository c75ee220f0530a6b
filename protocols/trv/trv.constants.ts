import type { Alarm } from '../../core/model/alarm.js';

/**
 * Layouts and tables of the TRV / IW watch protocol (kids' and elderly watches, docs/protocols/trv.md),
 * read from Traccar's TrvProtocol and TrvProtocolDecoder: `<vendor><type>[payload]#`, the vendor
 * `TRV` or two letters (`IW`), the type four characters (`AP01`, `YP14`, `APHT`).
 */
export const PROTOCOL = 'trv';

/** TrvProtocol: CharacterDelimiterFrameDecoder(MAX_FRAME_LENGTH = 1024, '#') */
export const MAX_FRAME_BYTES = 1024;
export const FRAME_DELIMITER = '#';

/** the vendor prefix written in full; any other is two characters */
export const VENDOR_TRV = 'TRV';
/** the vendor whose login is answered with the server time */
export const VENDOR_IW = 'IW';
/** what the encoder writes before a command until the watch has named its vendor */
export const DEFAULT_VENDOR = VENDOR_IW;

/** DecodeContext.session key this decoder writes (and the encoder reads): the vendor prefix */
export const SESSION_VENDOR = 'trv.vendor';

// Message types (the watch's "AP" commands; TRV trackers also send YP/CP)
export const TYPE_LOGIN = 'AP00';
export const TYPE_CONTACTS = 'AP14';
export const POSITION_TYPES: ReadonlySet<string> = new Set(['AP01', 'AP10', 'YP03', 'YP14']);
export const TYPE_LBS = 'AP02';
export const TYPE_STATUS = 'CP01';
export const TYPE_HEARTBEAT = 'AP03';
export const TYPE_HEART_RATE = 'AP49';
export const TYPE_BLOOD_PRESSURE = 'APHT';
export const TYPE_HEALTH = 'APHP';
export const TYPE_TEMPERATURE = 'AP50';

/** types the server does not answer (TrvProtocolDecoder IGNORE_RESPONSE) */
export const NO_REPLY_TYPES: ReadonlySet<string> = new Set([
  'AP12',
  'AP14',
  'AP33',
  'AP34',
  'AP40',
  'AP76',
  'AP77',
  'AP84',
  'AP85',
  'AP86',
  'AP87',
]);

/** what a non-IW AP14 (contacts) is answered with after the reply header */
export const CONTACTS_REPLY_TAIL = ',0.000,0.000';

/** The two-digit alarm field of a position report -> alarm (the reference knows these three). */
export const POSITION_ALARMS: Readonly<Record<number, Alarm>> = {
  1: 'sos',
  5: 'fallDown',
  6: 'fallDown',
};

const HEX2 = '[0-9a-fA-F]{2}';
const MAC = [HEX2, HEX2, HEX2, HEX2, HEX2, HEX2].join('-');

/**
 * AP01 / AP10 / YP03 / YP14 (TrvProtocolDecoder PATTERN): `yyMMdd`, A|V, `ddmm.mmmm` N|S,
 * `dddmm.mmmm` E|W, speed km/h `ddd.d`, `hhmmss` UTC, course (6 characters), then three-digit
 * GSM signal, satellites, battery, one-digit ACC, two-digit arm state and working mode, an optional
 * 3-5 digit field, `,mcc,mnc,lac,cid`, an optional two-digit alarm and the Wi-Fi list
 * `name|mac|rssi&…`. Anything after that is not read.
 */
export const PATTERN_POSITION = new RegExp(
  [
    String.raw`^[A-Z]{2,3}[A-Z]P\d{2}`,
    String.raw`(\d{2})(\d{2})(\d{2})`, // 1-3 date yyMMdd
    '([AV])', // 4 validity
    String.raw`(\d{2})(\d{2}\.\d+)([NS])`, // 5-7 latitude
    String.raw`(\d{3})(\d{2}\.\d+)([EW])`, // 8-10 longitude
    String.raw`(\d{3}\.\d)`, // 11 speed km/h
    String.raw`(\d{2})(\d{2})(\d{2})`, // 12-14 time hhmmss
    String.raw`([\d.]{6})`, // 15 course
    String.raw`(\d{3})(\d{3})(\d{3})(\d)(\d{2})(\d{2})`, // 16-21 gsm, satellites, battery, acc, arm, mode
    String.raw`(?:\d{3,5})?,`,
    String.raw`(\d+),(\d+),(\d+),(\d+)`, // 22-25 mcc, mnc, lac, cid
    String.raw`(?:,(\d{2}))?`, // 26 alarm
    String.raw`(?:,((?:[^|]+\|${MAC}\|\d+&?)+))?`, // 27 Wi-Fi
    '.*$',
  ].join(''),
  's',
);

/**
 * CP01 status (PATTERN_CP01): gsm, gps satellites, battery (3 digits each), ACC, arm state, mode;
 * optionally interval (3), vibration alarm (1), sensitivity (3), automatic arm (1) and its time (4),
 * then one digit each: blocked, power, movement.
 */
export const PATTERN_STATUS =
  /^[A-Z]{2,3}CP01,(\d{3})(\d{3})(\d{3})(\d)(\d{2})(\d{2})(?:\d{3}\d\d{3}\d\d{4}(\d)(\d)(\d))?.*$/s;

/** AP02 cells and Wi-Fi (PATTERN_AP02): `language,reply,cell count,mcc,mnc,lac|cid|rssi,…,wifi count,wifi` */
export const PATTERN_LBS = /^[A-Z]{2,3}AP02,[^,]+,[01],\d+,(\d+),(\d+),((?:\d+\|\d+\|\d+,)+)\d+,(.*)$/s;

/** AP03 heartbeat (PATTERN_AP03): rssi, satellites, battery %, a digit, hex arm state, mode, `,steps,rolls` */
export const PATTERN_HEARTBEAT = /^[A-Z]{2,3}AP03,(\d{3})(\d{3})(\d{3})\d[0-9a-fA-F]{2}\d{2},(\d+),\d+$/s;
