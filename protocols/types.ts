import type { PositionReport } from '../core/model/report.js';

export type Transport = 'tcp' | 'udp' | 'http';
export type AttributeValue = string | number | boolean;

/**
 * One thing a tracker reported: a position, an alarm, a status, or several at once, in the core's
 * units (km/h, degrees, metres, UTC). It is the core's PositionReport: decoders return exactly what
 * ingest takes. Attributes use the field's usual names (Traccar's keys: `batteryLevel` %, `battery` V,
 * `power` V, `ignition`, `odometer` m, `sat`, `rssi`, `event`, `temp1` °C, ...).
 */
export type DecodedMessage = PositionReport;
export type DecodedLocation = NonNullable<PositionReport['location']>;

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
  /**
   * The frame's checksum did not match (or was missing) and the frame was decoded anyway
   * (`checksum: 'accept'`); also listed in `warnings`. The gateway logs it at warn.
   */
  checksumError?: string;
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
   * The model of the device that sent the frame, as its record names it (*ext* `model`, set by the
   * operator), once the gateway knows the device; Traccar's device model (`setModelOverride` in its
   * tests). No protocol reports a model the decoders could use, so it comes only from the record.
   * Teltonika, GT06 and JT808 read it: there the model decides frame layouts and which codes mean
   * which alarm.
   */
  model?: string;
  /**
   * Per-connection state a decoder keeps between frames (e.g. a time zone from a login). Owned by
   * the connection; each decoder reads only keys it wrote itself (the gateway writes none).
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

/**
 * One protocol: pure functions over bytes. The port it is served on is configuration, not the
 * protocol's: config/config.ts PROTOCOL_DEFAULT_PORTS holds every usual port (CONTRACT.md §1).
 */
export interface ProtocolModule {
  name: string;
  transports: Transport[];
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
