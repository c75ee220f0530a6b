import type { Alarm } from '../../core/model/alarm.js';

/**
 * Layouts and tables read from Traccar `MeitrackProtocolDecoder.java`, `MeitrackFrameDecoder.java`
 * and `MeitrackProtocolEncoder.java` (docs/protocols.md §3.7), and from Meitrack's GPRS protocol
 * documents (T366/T622 "GPRS Command Format": `$$` from the tracker, `@@` from the server, the
 * data identifier of a reply equals that of the command, the checksum is the byte sum).
 */
export const PROTOCOL = 'meitrack';

/**
 * The largest frame taken. Meitrack documents commands of at most 1,024 bytes and GPRS packets of
 * about 50-1,046 bytes; captured CCE batches reach 1,102 bytes, so 8 KiB leaves room for longer
 * batches while bounding what one connection holds.
 */
export const MEITRACK_MAX_FRAME_BYTES = 8192;

/** the data identifier range, Meitrack GPRS protocol 1.1: 0x41 ('A') to 0x7A ('z') */
export const FLAG_FIRST = 0x41;
export const FLAG_COUNT = 0x7a - 0x41 + 1;

/** Event code -> alarm, MeitrackProtocolDecoder.decodeAlarm (35 is the periodic report: no alarm) */
export const EVENT_ALARMS: Readonly<Record<number, Alarm>> = {
  1: 'sos',
  17: 'lowBattery',
  18: 'lowPower',
  19: 'overspeed',
  20: 'geofenceEnter',
  21: 'geofenceExit',
  22: 'powerRestored',
  23: 'powerCut',
  36: 'tow',
  44: 'jamming',
  78: 'accident',
  90: 'hardCornering',
  91: 'hardCornering',
  129: 'hardBraking',
  130: 'hardAcceleration',
  135: 'fatigueDriving',
};

/** event 37: the event-specific field is a driver card (MeitrackProtocolDecoder.decodeRegular) */
export const EVENT_DRIVER_CARD = 37;

/** Command words whose frames are reports, not answers to a command. */
export const REPORT_TYPES: ReadonlySet<string> = new Set(['AAA', 'AFF']);

/**
 * Text report (MeitrackProtocolDecoder PATTERN):
 * `$$<flag><len>,<imei>,<AAA>,[<n>,]<event>,<lat>,<lon>,<yyMMddHHmmss>,<A|V>,<sats>,<gsm>,<km/h>,
 * <course>,<hdop>,<alt>,<odometer m>,<runtime s>,<mcc>|<mnc>|<lac>|<ci>,<in hex2><out hex2>,
 * <analog...>[,<event data>,<sensor>,<protocol>,<fuel>[,<temps>[,<n>,<data>]]]*<cs>`
 */
export const PATTERN_REPORT = new RegExp(
  [
    '^\\$\\$.\\d+,',
    '(\\d+),', // 1 imei
    '[0-9A-Fa-f]{3},', // command (AAA, AFF)
    '(?:\\d+,)?',
    '(\\d+),', // 2 event
    '(-?\\d+\\.\\d+),', // 3 latitude
    '(-?\\d+\\.\\d+),', // 4 longitude
    '(\\d{2})(\\d{2})(\\d{2})(\\d{2})(\\d{2})(\\d{2}),', // 5-10 yyMMddHHmmss (UTC)
    '([AV]),', // 11 validity
    '(\\d+),', // 12 satellites
    '(\\d+),', // 13 gsm signal
    '(\\d+\\.?\\d*),', // 14 speed km/h
    '(\\d+),', // 15 course
    '(\\d+\\.?\\d*),', // 16 hdop
    '(-?\\d+),', // 17 altitude
    '(\\d+),', // 18 odometer m
    '(\\d+),', // 19 runtime s
    '(\\d+)\\|(\\d+)\\|([0-9A-Fa-f]+)?\\|([0-9A-Fa-f]+)?,', // 20-23 mcc, mnc, lac, cell id
    '([0-9A-Fa-f]{2})([0-9A-Fa-f]{2}),', // 24-25 inputs, outputs
    '(?:',
    '(\\d+\\.\\d+)\\|(\\d+\\.\\d+)\\|\\d+\\.\\d+\\|\\d+\\.\\d+\\|\\d+\\.\\d+,', // 26-27 battery, power V (newer firmware)
    '|([0-9A-Fa-f]+)?\\|([0-9A-Fa-f]+)?\\|([0-9A-Fa-f]+)?\\|([0-9A-Fa-f]+)\\|([0-9A-Fa-f]+)?,', // 28-32 adc1-3, battery, power (hex)
    ')',
    '(?:',
    '(?:([^,*]+)?,)?', // 33 event data
    '([^,*]*),', // 34 sensor
    '(\\d+)?,', // 35 protocol version
    '([0-9A-Fa-f]{4})?', // 36 fuel
    '(?:,([0-9A-Fa-f]{6}(?:\\|[0-9A-Fa-f]{6})*)?', // 37 temperatures
    '(?:,(\\d+),([^*]*))?)?', // 38-39 data count, data
    '|[^*]*)',
    '\\*[0-9A-Fa-f]{2}(?:\\r\\n)?$',
  ].join(''),
);
