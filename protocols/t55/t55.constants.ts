/**
 * The T55 family as Traccar reads it (`T55ProtocolDecoder.java`, `T55Protocol.java`;
 * docs/protocols/t55.md): NMEA 0183 sentences and the vendor lines that name a device before them.
 */
export const PROTOCOL = 't55';

/** T55Protocol: LineBasedFrameDecoder(BaseProtocol.MAX_FRAME_LENGTH = 1024) */
export const MAX_FRAME_BYTES = 1024;

/** the reply to an RMC sentence when the device's `ack` setting is on (TCP only) */
export const ACK = 'OK1\r\n';
/** the device setting (Traccar's per-device `t55.ack`) */
export const SETTING_ACK = 'ack';

/** the device the connection's lines named last */
export const SESSION_IDENTITY = 't55.identity';
/** an RMC fix received before any line named the device (Maxon devices), held for `$GPFID` */
export const SESSION_PENDING = 't55.pending';
/** the `$GPFID` line that released the held fix, and the fix: the same line decoded again releases it again */
export const SESSION_RELEASED = 't55.released';

/** a fix date this far after the receive time is no real date (a GPS week rollover, `011196` read as 2096) */
export const MAX_AHEAD_MS = 25 * 3600_000;
