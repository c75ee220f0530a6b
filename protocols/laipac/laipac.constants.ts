import type { Alarm } from '../../core/model/alarm.js';

/**
 * Laipac S911/AVL (LaiPac "AVL protocol"; docs/protocols/laipac.md): NMEA-like ASCII sentences, one
 * a line, each `$<word>,…*<xor>`.
 */
export const PROTOCOL = 'laipac';

/** the longest line Traccar's LaipacProtocol takes (MAX_FRAME_LENGTH) */
export const MAX_FRAME_BYTES = 1024;

/** the password a device has until the operator sets another (Traccar's DEFAULT_DEVICE_PASSWORD) */
export const DEFAULT_DEVICE_PASSWORD = '00000000';

/** the device setting that holds the device's own password, for `$AVCFG` (Traccar's `devicePassword`) */
export const SETTING_DEVICE_PASSWORD = 'devicePassword';

/**
 * `$AVRMC`: position report. id, hhmmss, status (A/R/P valid, V/v… not; lower case asks for an ack),
 * ddmm.mmmm, N|S, dddmm.mmmm, E|W, speed knots, course, ddmmyy, event, battery (V, or mV without a
 * point), mileage km, GPS status, adc1 mV, adc2 mV; optionally LAC and CID (hex, glued) and MCC and
 * MNC (glued); anything after that is not read; `*` XOR.
 */
export const AVRMC = new RegExp(
  [
    String.raw`^\$AVRMC,([^,]+),(\d\d)(\d\d)(\d\d),([AVRPavrp]),`,
    String.raw`(\d\d)(\d\d\.\d+),([NS]),(\d\d\d)(\d\d\.\d+),([EW]),`,
    String.raw`(\d+\.\d+),(\d+\.\d+),(\d\d)(\d\d)(\d\d),([0-9A-Za-z]),([\d.]+),(\d+),(\d),(\d+),(\d+)`,
    String.raw`(?:,([0-9a-fA-F]{4}|[0-9a-fA-F])([0-9a-fA-F]{4}),(\d\d\d|\d)(\d\d\d))?`,
    String.raw`(?:,([^*]*))?\*([0-9a-fA-F]{2})$`,
  ].join(''),
);

/** `$EAVSYS`: system information. id, ICCID, SIM phone number, owner name, firmware version */
export const EAVSYS = /^\$EAVSYS,([^,]+),([0-9]+),(\+?[0-9]+)?,(?:[^,]*),([^,]*)?\*([0-9a-fA-F]{2})$/;

/** a sentence's own word and device id, for sentences that are not read (`$AVSYS`) */
export const ANY_SENTENCE = /^\$[A-Z]+,([^,*]+)/;

/** `$AVRMC` event codes that are alarms */
export const EVENT_ALARMS: Readonly<Record<string, Alarm>> = {
  Z: 'lowBattery',
  Y: 'tow',
  X: 'geofenceEnter',
  T: 'tampering',
  H: 'powerOff',
  '8': 'vibration',
  '7': 'geofenceExit',
  '4': 'geofenceExit',
  '6': 'overspeed',
  '5': 'powerCut',
  '3': 'sos',
};

/** `$AVRMC` events the server confirms with `$AVCFG,<password>,<code>`, and their code */
export const EVENT_CONFIRMATIONS: Readonly<Record<string, string>> = {
  '3': 'd',
  M: 'm',
  S: 't',
  T: 't',
  X: 'x',
  '4': 'x',
  Y: 'y',
  Z: 'z',
};

/** models whose adc2 is an input (Traccar reads it only for these) */
export const MODELS_WITH_ADC2: ReadonlySet<string> = new Set(['AVL110', 'AVL120']);

/** the model with a third input, which the input-status events report too */
export const MODEL_SF_LITE = 'SF-Lite';
