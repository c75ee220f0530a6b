import type { Alarm } from '../../core/model/alarm.js';

/**
 * Layouts and tables read from Traccar `WatchProtocol.java`, `WatchFrameDecoder.java`,
 * `WatchProtocolDecoder.java` and `WatchProtocolEncoder.java` (docs/protocols.md §3.9): the SeTracker
 * family of 3G/4G kids' and elderly watches, `[<maker>*<id>*[<index>*]<len>*<TYPE>[,<payload>]]`.
 */
export const PROTOCOL = 'watch';

/** Voice (JXTK, TK) and picture (img) chunks are the largest frames: a few KiB each. */
export const MAX_FRAME_BYTES = 65_536;

export const FRAME_START = 0x5b; // [
export const FRAME_END = 0x5d; // ]
/** `}` escapes a byte inside a frame (binary voice and picture data) */
export const ESCAPE = 0x7d;

/** the byte after `}` -> the byte it stands for (WatchFrameDecoder) */
export const UNESCAPED: Readonly<Record<number, number>> = {
  0x01: 0x7d, // }
  0x02: 0x5b, // [
  0x03: 0x5d, // ]
  0x04: 0x2c, // ,
  0x05: 0x2a, // *
};

/** The maker the encoder writes until the device has named its own (WatchProtocolEncoder default). */
export const DEFAULT_MAKER = 'CS';
/** The index a command carries when the device's frames carry one (WatchProtocolEncoder) */
export const COMMAND_INDEX = '0001';

/** DecodeContext.session keys this decoder writes (and the encoder reads) */
export const SESSION_MAKER = 'watch.maker';
export const SESSION_INDEXED = 'watch.indexed';

/**
 * Status word bits -> alarm, in the order WatchProtocolDecoder.decodeAlarm tests them: the first
 * set bit wins. Bit 4 is motion, not an alarm.
 */
export const STATUS_ALARMS: ReadonlyArray<readonly [number, Alarm]> = [
  [0, 'lowBattery'],
  [1, 'geofenceExit'],
  [2, 'geofenceEnter'],
  [14, 'powerCut'],
  [16, 'sos'],
  [17, 'lowBattery'],
  [18, 'geofenceExit'],
  [19, 'geofenceEnter'],
  [20, 'removing'],
  [21, 'fallDown'],
  [22, 'fallDown'],
];
export const STATUS_MOTION_BIT = 4;

// Replies the watch expects, WatchProtocolDecoder.decode
export const REPLY_INIT = 'INIT,1';
export const REPLY_LINK = 'LK';
export const REPLY_ALARM = 'AL';
export const REPLY_VOICE_CHUNK = 'JXTKR,1';
