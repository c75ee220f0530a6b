import type { Alarm } from '../../core/model/alarm.js';

// Constants read from Traccar: src/main/java/org/traccar/protocol/H02FrameDecoder.java,
// H02ProtocolDecoder.java and H02Protocol.java (docs/protocols.md §3.3).

export const PROTOCOL = 'h02';

/**
 * No frame is longer. The longest real text frames (NBR/V3 cell lists, SMS replies) stay
 * under 400 bytes; binary frames are 32-48 bytes.
 */
export const MAX_FRAME_BYTES = 1024;

/** frame markers, H02FrameDecoder: text `*…#`, binary `$…`, alternative binary `X…` */
export const MARKER_TEXT = 0x2a; // '*'
export const MARKER_BINARY = 0x24; // '$'
export const MARKER_ALT = 0x58; // 'X'
export const TEXT_END = 0x23; // '#'

/** binary `$` frame lengths, H02FrameDecoder MESSAGE_SHORT / MESSAGE_LONG */
export const BINARY_SHORT = 32;
export const BINARY_LONG = 45;
/** a `$` frame of exactly this length carries an 8-byte (IMEI) id, H02ProtocolDecoder.decodeBinary */
export const BINARY_LONG_ID = 42;
/** `X` frames are always short, H02FrameDecoder */
export const ALT_LENGTH = 32;

/**
 * Status word alarms, H02ProtocolDecoder.processStatus. The logic is inverted: a bit of 0 means
 * the alarm is active. Listed in Traccar's priority order.
 */
export const STATUS_ALARMS: ReadonlyArray<{ bit: number; alarm: Alarm }> = [
  { bit: 0, alarm: 'vibration' },
  { bit: 1, alarm: 'sos' },
  { bit: 18, alarm: 'sos' },
  { bit: 2, alarm: 'overspeed' },
  { bit: 19, alarm: 'powerCut' },
];

/** status bit 10 set = ignition on (not inverted), processStatus */
export const STATUS_IGNITION_BIT = 10;
