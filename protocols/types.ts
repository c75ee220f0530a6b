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
  /** the device identifier the frame names (IMEI or the like), as the frame writes it, when it names one */
  identity?: string;
  /**
   * Other forms of `identity` a device may be registered under, tried in order after it when no
   * device has `identity` (JT808: the terminal number without its leading zeros, as Traccar also
   * tries it). Absent for most protocols: their identifier has one form.
   */
  alternativeIdentities?: string[];
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
  /**
   * What the device answered to a command sent to it (Teltonika Codec 12 type 0x06, GT06 0x15 and
   * 0x21, H02 V4, JT808 0x0001 and text replies). Kept apart from `messages`: an answer is matched to
   * the command it answers, not stored as a report (a report the same frame carries is in `messages`).
   */
  commandResults?: CommandResult[];
}

/** Result of a JT808 0x0001 terminal general response (JT/T 808-2013 8.1: 0 ok, 1 failed, 2 bad message, 3 unsupported). */
export type CommandResultStatus = 'ok' | 'failed' | 'badMessage' | 'unsupported';

/**
 * What the device echoes of the command it answers, by protocol: GT06 the server flag, JT808 the
 * serial and message id, H02 the command word and the `hhmmss` it was sent with, Meitrack the
 * command word and data identifier, Queclink the command word and the serial the command ended
 * with, a watch the command word. Teltonika, GPS103, TK103, Suntech and Ruptela answers echo
 * nothing: the next answer on the connection is the answer.
 */
export interface CommandMatch {
  /** GT06: the u32 server flag of the 0x80 command */
  serverFlag?: number;
  /** JT808: the serial of the platform message answered; Queclink: the hex4 serial ending the `AT+GT` command */
  replySerial?: number;
  /** JT808: the id of the platform message answered (0x8300, 0x8105, 0x8900) */
  replyMessageId?: number;
  /** H02 and watch: the command word (`S20`, `CR`); Meitrack: the command word (`C01`); Queclink: `GT` and the command's three letters (`GTOUT`) */
  command?: string;
  /** H02: the `hhmmss` the command carried */
  commandTime?: string;
  /** Meitrack: the data identifier (the character after `@@`), which the answer repeats after `$$` */
  flag?: string;
  /** MQTT devices: the id of the command (`devices/{id}/commandResults` `{id, result}`) */
  commandId?: number;
}

/** A device's answer to a command, as the frame carries it. */
export interface CommandResult extends CommandMatch {
  /** the answer's text ('' when the answer is only a status, as a JT808 0x0001 is) */
  text: string;
  /** JT808 0x0001: what the terminal says it did */
  status?: CommandResultStatus;
}

/** Everything an encoder needs besides the command text. Encoders read no clock and keep no counter. */
export interface CommandContext {
  /** the device's identifier, as the decoder's `identity` names it (IMEI, terminal id) */
  deviceId: string;
  /** when the command is sent: H02 writes its `hhmmss` (UTC) into the frame */
  now: Date;
  /** the connection's command counter (0-65535), kept by the gateway: GT06 and JT808 frame serials */
  serial: number;
  /** GT06: the u32 server flag the device echoes in its answer; default `serial` */
  serverFlag?: number;
  /** the device record's model, as DecodeContext.model: JT808 Jimi models take text another way */
  model?: string;
  /** the device record's decoder settings, as DecodeContext.options */
  options?: Readonly<Record<string, string>>;
  /**
   * The connection's decoder session (DecodeContext.session), read only: what the decoder learned
   * that the frame must repeat (the JT808 protocol version).
   */
  session?: Readonly<Record<string, unknown>>;
}

/** A command as bytes for the device's connection, and what its answer will echo. */
export interface EncodedCommand {
  bytes: Buffer;
  /** the keys a CommandResult answering this command carries with these values; `{}` when answers echo nothing */
  match: CommandMatch;
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
   * Decoder settings of the device that sent the frame, by name (*ext* `protocolOptions` of its
   * record; `trackgate decode --option NAME=VALUE`): what Traccar deployments set per device in its
   * configuration, named as Traccar's decoder setter without `set`, first letter lower case
   * (`custom`, `form`, `longDate`, `flexDataSize`). Values are text; each decoder reads and checks
   * only its own names (docs/protocols.md "Device settings"). Absent or `{}`: the protocol's defaults.
   */
  options?: Readonly<Record<string, string>>;
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

/** One device's part of a request that carries several devices' messages. */
export interface DeviceMessages {
  identity: string;
  messages: DecodedMessage[];
  /**
   * The device's own part of the request (its messages as the request wrote them), which its
   * raw-frame feed shows instead of the whole request: that holds other devices' messages too.
   */
  part?: () => Buffer;
}

export interface HttpDecodeResult extends DecodeResult {
  /** the HTTP status to answer with once stored (200), or an error status for a bad request */
  status: number;
  /**
   * Set when one request carries messages of several devices, each naming its own (flespi: every
   * message has its `ident`): one group per device, in the order each first appears. The HTTP
   * endpoint then resolves and stores every group and answers `status` only once every known
   * device's messages are stored; an empty list is a request with nothing to store. `identity` and
   * `messages` then hold the first group's identity and all groups' messages, for the tools that
   * read one result (`trackgate decode`, the vector runner).
   */
  devices?: DeviceMessages[];
}

/**
 * One protocol: pure functions over bytes. The port it is served on is configuration, not the
 * protocol's: config/config.ts PROTOCOL_DEFAULT_PORTS holds every usual port (docs/contract.md §1).
 */
export interface ProtocolModule {
  name: string;
  transports: Transport[];
  /** no frame is longer; a longer one means framing is lost */
  maxFrameBytes: number;
  /**
   * The device settings this protocol's decoder reads (DecodeContext.options), by name: the names
   * `trackgate decode --option` and a device's *ext* `protocolOptions` may give it. Absent: none.
   */
  settings?: readonly string[];
  /** how `trackgate decode` reads a FRAME argument */
  frameEncoding: 'hex' | 'text' | 'http';
  createSplitter?(maxFrameBytes?: number): FrameSplitter;
  /** decodes one TCP frame (as cut by the splitter) */
  decode?(frame: Buffer, ctx: DecodeContext): DecodeResult;
  /** decodes one UDP datagram */
  decodeDatagram?(datagram: Buffer, ctx: DecodeContext): DecodeResult;
  /** decodes one HTTP request (OsmAnd) */
  decodeHttp?(request: HttpRequestLike, ctx: DecodeContext): HttpDecodeResult;
  /**
   * Wraps a `Text` command (docs/contract.md "Commands") in the protocol's own command framing. Pure:
   * throws CommandError for a text the framing cannot carry. Absent: the protocol carries no
   * commands (OsmAnd).
   */
  encodeCommand?(text: string, ctx: CommandContext): EncodedCommand;
}

/** Why a command text cannot be encoded. Stable: callers map it to an API error. */
export type CommandErrorReason =
  /** nothing to send */
  | 'EMPTY'
  /** the text holds a byte the protocol uses to delimit frames or fields it may not hold */
  | 'DELIMITER'
  /** longer than the framing (or the device) takes */
  | 'TOO_LONG'
  /** a character the protocol's text cannot carry (control characters; non-ASCII where the protocol is ASCII) */
  | 'CHARSET'
  /** the device id cannot be written in the frame (not digits, too long) */
  | 'DEVICE_ID'
  /** the protocol carries only named commands, and this is none of them (Castel: engineStop, engineResume) */
  | 'UNKNOWN_COMMAND';

/** A command text the protocol cannot carry, with the problem named. */
export class CommandError extends Error {
  readonly protocol: string;
  readonly reason: CommandErrorReason;

  constructor(protocol: string, reason: CommandErrorReason, message: string) {
    super(`${protocol}: ${message}`);
    this.name = 'CommandError';
    this.protocol = protocol;
    this.reason = reason;
  }
}

/** What else a ProtocolError says: whether framing is lost, and the device the unreadable frame names. */
export interface ProtocolErrorOptions {
  /** true when the byte stream can no longer be split (the connection should close) */
  framingLost?: boolean;
  /** the device identifier the frame names, when it names one although it cannot be read (for the raw-frame feed) */
  identity?: string;
}

/**
 * A frame that cannot be read: thrown by decoders for every frame they cannot read, whatever the
 * reason (the gateway treats them all alike: logged as `malformed frame`, counted malformed, shown
 * on the raw-frame feed, nothing stored or acknowledged). Carries the protocol and a short hex
 * excerpt for the log.
 */
export class ProtocolError extends Error {
  readonly protocol: string;
  readonly excerpt: string;
  /** true when the byte stream can no longer be split (the connection should close) */
  readonly framingLost: boolean;
  /** the device the frame names, when it names one */
  readonly identity?: string;

  constructor(protocol: string, reason: string, frame?: Buffer, options: boolean | ProtocolErrorOptions = false) {
    const excerpt = frame ? frame.subarray(0, 32).toString('hex') + (frame.length > 32 ? '…' : '') : '';
    super(`${protocol}: ${reason}${excerpt ? ` [${excerpt}]` : ''}`);
    const o = typeof options === 'boolean' ? { framingLost: options } : options;
    this.name = 'ProtocolError';
    this.protocol = protocol;
    this.excerpt = excerpt;
    this.framingLost = o.framingLost ?? false;
    if (o.identity !== undefined) this.identity = o.identity;
  }
}
