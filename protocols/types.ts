import type { Alarm } from '../core/model/alarm.js';

export type Transport = 'tcp' | 'udp' | 'http';
export type AttributeValue = string | number | boolean;

/** Where a decoded message was, in the units the core stores. Convert at the decoder boundary. */
export interface DecodedLocation {
  latitudeDeg: number;
  longitudeDeg: number;
  /** the device says the fix is valid (GPS fixed) */
  valid: boolean;
  speedKmh?: number;
  courseDeg?: number;
  altitudeM?: number;
  accuracyM?: number;
  satellites?: number;
}

/**
 * One thing a tracker reported: a position, an alarm, a status, or several at once.
 * A status or heartbeat that carries an alarm but no fix has `alarms` and no `location`.
 */
export interface DecodedMessage {
  /** fix time in UTC; absent when the frame carries no time (the gateway uses receive time) */
  fixTime?: Date;
  location?: DecodedLocation;
  /** canonical alarm names, empty when none */
  alarms: Alarm[];
  /**
   * Everything else, under the field's usual attribute names (Traccar's keys: `batteryLevel` %,
   * `battery` V, `power` V, `ignition`, `odometer` m, `sat`, `rssi`, `event`, `temp1` °C, ...).
   */
  attributes: Record<string, AttributeValue>;
}

export interface DecodeResult {
  /** the device identifier the frame names (IMEI or the like), when it names one */
  identity?: string;
  messages: DecodedMessage[];
  /**
   * Bytes to send back. The gateway sends them only once the device is known and `messages` are
   * durably stored (the acknowledgement must never precede the write).
   */
  replies: Buffer[];
  /** bytes to send instead of `replies` when the device is unknown or expired (e.g. Teltonika `00`) */
  rejection?: Buffer;
  /** non-fatal problems (e.g. a checksum mismatch accepted by policy), for the log */
  warnings?: string[];
}

export interface DecodeContext {
  /** when the frame was received; decoders never read the wall clock */
  now: Date;
  transport: Transport;
  /** identity already established on this connection (e.g. by an earlier login frame) */
  deviceId?: string;
  /** `strict`: a checksum mismatch throws ProtocolError; `accept` (default): decoded, with a warning */
  checksum: 'accept' | 'strict';
  /**
   * Per-connection state a decoder may keep between frames (e.g. a time zone from a login).
   * Owned by the connection; decoders read and write only their own keys.
   */
  session: Record<string, unknown>;
}

/** Cuts a TCP byte stream into frames. Keeps at most `maxFrameBytes` buffered. */
export interface FrameSplitter {
  /** Adds a chunk and returns every frame now complete. Garbage between frames is skipped. */
  push(chunk: Buffer): Buffer[];
  /** bytes held waiting for the rest of a frame */
  readonly buffered: number;
}

export interface HttpRequestLike {
  method: string;
  /** path and query string, e.g. `/?id=123&lat=1&lon=2` */
  url: string;
  headers: Record<string, string | undefined>;
  body: Buffer;
}

export interface HttpDecodeResult extends DecodeResult {
  /** the HTTP status to answer with once stored (200), or an error status for a bad request */
  status: number;
}

export interface ProtocolModule {
  name: string;
  transports: Transport[];
  /** the port deployed trackers are configured for (CONTRACT.md §1) */
  defaultPort: number;
  /** no frame is longer; a longer one means framing is lost */
  maxFrameBytes: number;
  /** how `trackgate decode` reads a FRAME argument */
  frameEncoding: 'hex' | 'text' | 'http';
  createSplitter?(maxFrameBytes?: number): FrameSplitter;
  /** decodes one TCP frame (as cut by the splitter) */
  decode?(frame: Buffer, ctx: DecodeContext): DecodeResult;
  /** decodes one UDP datagram */
  decodeDatagram?(datagram: Buffer, ctx: DecodeContext): DecodeResult;
  /** decodes one HTTP request (OsmAnd) */
  decodeHttp?(request: HttpRequestLike, ctx: DecodeContext): HttpDecodeResult;
}

/** A frame that cannot be decoded. Carries the protocol and a short hex excerpt for the log. */
export class ProtocolError extends Error {
  readonly protocol: string;
  readonly excerpt: string;
  /** true when the byte stream can no longer be split (the connection should close) */
  readonly framingLost: boolean;

  constructor(protocol: string, reason: string, frame?: Buffer, framingLost = false) {
    const excerpt = frame ? frame.subarray(0, 32).toString('hex') + (frame.length > 32 ? '…' : '') : '';
    super(`${protocol}: ${reason}${excerpt ? ` [${excerpt}]` : ''}`);
    this.name = 'ProtocolError';
    this.protocol = protocol;
    this.excerpt = excerpt;
    this.framingLost = framingLost;
  }
}
