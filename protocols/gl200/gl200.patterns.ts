/**
 * Layouts of the Queclink text reports whose fields vary too much to read by position, as regular
 * expressions (the layouts of Traccar's Gl200TextProtocolDecoder PATTERN_*; docs/protocols.md §3.6).
 * Every pattern matches a whole sentence without its `$`, `+RESP:` or `+BUFF:`.
 */

/** the head of a report: `+RESP:GT<type>,<protocol version>,<imei>,` (group 1: the IMEI) */
const head = (types: string): string =>
  `^\\+(?:RESP|BUFF):GT(?:${types}),(?:[^,]{6}|[^,]{10})?,(\\d{15}|[0-9a-fA-F]{14}),`;

/** the tail: `[<send time yyyyMMddHHmmss>],<count number hex4>` (6 time groups, then the count) */
const TAIL = '(?:(\\d{4})(\\d{2})(\\d{2})(\\d{2})(\\d{2})(\\d{2}))?,([0-9a-fA-F]{4})$';

/**
 * One location block (18 groups): 1 hdop, 2 speed km/h, 3 azimuth, 4 altitude m, 5 longitude,
 * 6 latitude, 7-12 GPS UTC time, 13 Wi-Fi access points, 14 mcc, 15 mnc, 16 lac hex, 17 cell id
 * hex, 18 odometer km (the reserved field, when it holds a decimal point).
 */
export const LOCATION_SOURCE = [
  '(\\d{1,2}\\.?\\d?)?,', // hdop
  '(\\d{1,3}\\.\\d)?,', // speed km/h
  '(\\d{1,3}\\.?\\d?)?,', // azimuth
  '(-?\\d{1,5}\\.\\d)?,', // altitude m
  '(-?\\d{1,3}\\.\\d{6})?,', // longitude (before latitude)
  '(-?\\d{1,2}\\.\\d{6})?,', // latitude
  '(?:(\\d{4})(\\d{2})(\\d{2})(\\d{2})(\\d{2})(\\d{2}))?', // GPS UTC time
  '(?:,\\d+((?:,[0-9a-fA-F]{12},-\\d+,,,)+))?', // wifi count, access points
  ',',
  '(\\d+)?,', // mcc
  '(\\d+)?,', // mnc
  '([0-9a-fA-F]+)?,', // lac
  '([0-9a-fA-F]+)?,', // cell id
  '(?:\\d+|(\\d+\\.\\d))?,', // reserved / odometer km
].join('');

/** the same block without captures, for patterns that take it as one group */
const LOC = `(?:${LOCATION_SOURCE.replace(/\((?!\?)/g, '(?:')})`;

export const PATTERN_LOCATION = new RegExp(`^${LOCATION_SOURCE}`);
export const PATTERN_LOCATIONS = new RegExp(LOCATION_SOURCE, 'gy');

/**
 * FRI, GEO, RTL, DOG: `<power mV>,[<report type>,<count>,]` then N location blocks, then one of
 * the tails the models send (Gl200TextProtocolDecoder PATTERN_FRI). Groups: 1 imei, 2 vin,
 * 3 power, 4 report type, 5 battery %, 6 the location blocks; tail (a) GL50x 7 battery mV,
 * 8 battery %, 9 temperature; (b) GV 10 odometer km, 11 hour meter, 12 adc1, 13 adc2, 14 battery %,
 * 15 device status hex6, 16 rpm, 17 fuel; (c) GT501 18 rssi, 19 battery %; (d) GL 20 odometer,
 * 21 battery %; 22-27 send time, 28 count.
 */
export const PATTERN_FRI = new RegExp(
  [
    head('FRI|GEO|RTL|DOG'),
    '(?:([0-9A-Z]{17}),)?', // vin
    '[^,]*,', // device name
    '(\\d+)?,', // external power mV
    '(?:(\\d{1,2}),)?', // report type
    '(?:\\d{1,2},)?', // number of blocks
    '(?:\\d*,)?', // reserved
    '(?:(\\d+),)?', // battery %
    `(${LOC}+)`,
    '(?:',
    '\\d{1,2},(\\d{1,5})?,(\\d{1,3}),[01],(?:[01])?,(-?\\d{1,2}\\.\\d)?,',
    '|(\\d{1,7}\\.\\d)?,(\\d{5}:\\d\\d:\\d\\d)?,([0-9a-fA-F]+)?,([0-9a-fA-F]+)?,(?:\\d*,)?(\\d{1,3})?,([0-9a-fA-F]{6})?,(\\d+)?,(?:\\d+\\.?\\d*|Inf|NaN)?,(\\d+)?,',
    '|(-?\\d),(\\d{1,3}),',
    '|(?:(\\d{1,7}\\.\\d)?,)?(\\d{1,3})?,',
    ')',
    '.*?',
    TAIL,
  ].join(''),
);

/** OBD: 2 rpm, 3 speed, 4 coolant, 5 fuel consumption, 6 dtcs cleared distance, 7 obd connect, 8 dtc count, 9 dtcs, 10 throttle, 11 fuel %, 12 odometer km, 13 location, 14 odometer km, 15-20 send time */
export const PATTERN_OBD = new RegExp(
  [
    head('OBD'),
    '(?:[0-9A-Z]{17})?,', // vin
    '[^,]{0,20},', // device name
    '[01],', // report type
    '[0-9a-fA-F]{1,8},', // report mask
    '(?:[0-9A-Z]{17})?,', // vin
    '[01],', // obd connect
    '(?:\\d{1,5})?,', // obd voltage
    '(?:[0-9a-fA-F]{8})?,', // supported pids
    '(\\d{1,5})?,', // engine rpm
    '(\\d{1,3})?,', // speed
    '(-?\\d{1,3})?,', // coolant temperature
    '(\\d+\\.?\\d*|Inf|NaN)?,', // fuel consumption
    '(\\d{1,5})?,', // distance since dtcs cleared
    '(?:\\d{1,5})?,',
    '([01])?,', // obd connect
    '(\\d{1,3})?,', // number of dtcs
    '([0-9a-fA-F]*),', // dtcs
    '(\\d{1,3})?,', // throttle
    '(?:\\d{1,3})?,', // engine load
    '(\\d{1,3})?,', // fuel level
    '(?:[0-9A],)?', // obd protocol
    '(\\d+),', // odometer
    `(${LOC})`,
    '(\\d{1,7}\\.\\d)?,', // odometer
    TAIL,
  ].join(''),
);

/** LSW / TSW: 2 input state, 3 location, 4-9 send time */
export const PATTERN_LSW = new RegExp(`${head('LSW|TSW')}[^,]*,[01],([01]),(${LOC})${TAIL}`);

/** IDA: 2 rfid, 3 location, 4 odometer km, 5-10 send time */
export const PATTERN_IDA = new RegExp(`${head('IDA')}[^,]*,,([^,]+),[01],1,(${LOC})(\\d+\\.\\d),,,,${TAIL}`);

/** WIF: 2 count, 3 access points, 4 battery %, 5-10 send time */
export const PATTERN_WIF = new RegExp(
  `${head('WIF')}[^,]*,(\\d+),((?:[0-9a-fA-F]{12},-?\\d+,,,,)+),,,,(\\d{1,3}),${TAIL}`,
);
export const PATTERN_WIFI = /([0-9a-fA-F]{12}),(-?\d+),,,,/g;

/** GSM: 2 cells (mcc, mnc, lac hex, cell hex, rssi, reserved; seven of them), 3-8 send time */
export const PATTERN_GSM = new RegExp(`${head('GSM')}(?:STR|CTN|NMR|RTL),(.*?)${TAIL}`);

/** VER: 2 device type, 3 firmware hex4, 4 hardware hex4, 5-10 send time */
export const PATTERN_VER = new RegExp(`${head('VER')}[^,]*,([^,]*),([0-9a-fA-F]{4}),([0-9a-fA-F]{4}),${TAIL}`);

/** PNA / PFA: power on / off, 2-7 send time */
export const PATTERN_PNA = new RegExp(`${head('PNA|PFA')}[^,]*,${TAIL}`);

/** DAR: 2 warning type, 3 fatigue degree, 4 location, 5-10 send time */
export const PATTERN_DAR = new RegExp(`${head('DAR')}[^,]*,(\\d),(\\d{1,2}),,,(${LOC}).*?${TAIL}`);

/** DTT: 2 transparent data hex, 3-8 send time */
export const PATTERN_DTT = new RegExp(`${head('DTT')}[^,]*,,,\\d,\\d+,([0-9a-fA-F]+),${TAIL}`);

/** BAA: 2 append mask hex4, 3 accessory fields, 4 location, 5-10 send time */
export const PATTERN_BAA = new RegExp(
  `${head('BAA')}[^,]*,[0-9a-fA-F]+,\\d,\\d,[0-9a-fA-F]+,([0-9a-fA-F]{4}),((?:[^,]+,){0,6})(${LOC}).*?${TAIL}`,
);

/** BID: 2 append mask hex4, 3 accessory fields, 4 location, 5-10 send time */
export const PATTERN_BID = new RegExp(
  `${head('BID')}[^,]*,\\d,\\d,([0-9a-fA-F]{4}),((?:[^,]+,){0,2})(${LOC}).*?${TAIL}`,
);

/** LSA: 2 location, 3 light level, 4 battery %, 5 temperature, 6-11 send time */
export const PATTERN_LSA = new RegExp(
  `${head('LSA')}[^,]*,\\d,\\d,\\d+,(${LOC})\\d+,(\\d),(\\d+),[01],[01]?,(-?\\d+\\.\\d)?,${TAIL}`,
);
