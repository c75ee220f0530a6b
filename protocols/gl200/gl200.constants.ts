import type { Alarm } from '../../core/model/alarm.js';

/**
 * Queclink @Track protocol (GL/GV/GB/GMT series), docs/protocols.md §3.6. Layouts read from Traccar
 * `Gl200FrameDecoder.java`, `Gl200TextProtocolDecoder.java` and `Gl200BinaryProtocolDecoder.java`.
 */
export const PROTOCOL = 'gl200';

/**
 * Longest frame kept. Text reports are a few hundred bytes (CAN reports with every mask bit set
 * stay under 2 KB); binary frames carry their own u16 length, and a length above this is treated
 * as lost framing, not as a frame.
 */
export const GL200_MAX_FRAME_BYTES = 4096;

/** Gl200FrameDecoder MINIMUM_LENGTH: nothing shorter is judged as a binary frame */
export const MIN_BINARY_BYTES = 11;

/**
 * Binary headers and where each keeps its length (Gl200FrameDecoder): the offset and the size of
 * the length field. `+ACK` is binary only when no `:` follows it. Every other binary header keeps
 * a u16 at offset 9 (after the message type and the u32 mask).
 */
export const BINARY_LENGTH_AT: Readonly<Record<string, { offset: number; size: 1 | 2 }>> = {
  '+RSP': { offset: 9, size: 2 },
  '+BSP': { offset: 9, size: 2 },
  '+EVT': { offset: 9, size: 2 },
  '+BVT': { offset: 9, size: 2 },
  '+INF': { offset: 7, size: 2 },
  '+BNF': { offset: 7, size: 2 },
  '+HBD': { offset: 5, size: 1 },
  '+CRD': { offset: 6, size: 2 },
  '+BRD': { offset: 6, size: 2 },
  '+LGN': { offset: 6, size: 2 },
  '+ACK': { offset: 6, size: 1 },
};

/** A frame whose second byte is 0 starts with a 2-byte tag and a u16 length at offset 2 */
export const PREFIXED_LENGTH_OFFSET = 2;

/** Text frames end with `$`; some devices end them with NUL instead */
export const TEXT_END = 0x24;
export const TEXT_END_ALT = 0x00;

/**
 * Model by protocol-version prefix (the first two hex digits, or the first six of a 10-digit
 * version), Gl200TextProtocolDecoder PROTOCOL_MODELS. Layouts of ERI, INF, CAN and IGN differ by
 * model; the device record's model (DecodeContext.model) takes precedence.
 */
export const MODEL_BY_VERSION: Readonly<Record<string, string>> = {
  '02': 'GL200',
  '04': 'GV200',
  '06': 'GV300',
  '08': 'GMT100',
  '09': 'GV50P',
  '0F': 'GV55',
  '10': 'GV55 LITE',
  '11': 'GL500',
  '1A': 'GL300',
  '1F': 'GV500',
  '21': 'GL200',
  '25': 'GV300',
  '27': 'GV300W',
  '28': 'GL300VC',
  '2C': 'GL300W',
  '2D': 'GV500VC',
  '2F': 'GV55',
  '4F': 'GV56',
  '30': 'GL300',
  '31': 'GV65',
  '35': 'GV200',
  '36': 'GV500',
  '3F': 'GMT100',
  '40': 'GL500',
  '41': 'GV75W',
  '42': 'GT501',
  '44': 'GL530',
  '45': 'GB100',
  '50': 'GV55W',
  '52': 'GL50',
  '55': 'GL50B',
  '5E': 'GV500MAP',
  '6E': 'GV310LAU',
  '74': 'GV350CEU',
  BD: 'CV200',
  C2: 'GV600M',
  C3: 'GL320M',
  DC: 'GV600MG',
  DE: 'GL500M',
  DF: 'CV100LG',
  F1: 'GV350M',
  F8: 'GV800W',
  FC: 'GV600W',
  '802004': 'GV58LAU',
  '802005': 'GV355CEU',
  '80201E': 'GV30CEU',
};

/** Report type -> alarm, Gl200TextProtocolDecoder.decodeBasic (docs/protocols.md §3.6) */
export const REPORT_ALARMS: Readonly<Record<string, Alarm>> = {
  SOS: 'sos', // SOS button
  SPD: 'overspeed',
  TOW: 'tow',
  IDL: 'idle',
  PNA: 'powerOn', // device powered on
  PFA: 'powerOff', // device powered off
  EPN: 'powerRestored', // external power connected
  MPN: 'powerRestored', // main power connected
  EPF: 'powerCut', // external power cut
  MPF: 'powerCut', // main power cut
  BPL: 'lowBattery', // backup battery low
  STT: 'movement', // motion state changed
  SWG: 'geofence',
  TMP: 'temperature',
  TEM: 'temperature',
  JDR: 'jamming', // GSM jamming detected
  JDS: 'jamming',
};

/** GTHBM harsh behaviour: the low nibble of the report type (0/3 braking, 1/4 acceleration, 2 cornering) */
export const HARSH_BEHAVIOUR: Readonly<Record<number, Alarm>> = {
  0: 'hardBraking',
  1: 'hardAcceleration',
  2: 'hardCornering',
  3: 'hardBraking',
  4: 'hardAcceleration',
};

// Replies (Gl200TextProtocolDecoder.decodeAck and decode)
/** the heartbeat `+ACK:GTHBD,<version>,...,<count>` is answered `+SACK:GTHBD,<version>,<count>$` */
export const sackHeartbeat = (version: string, count: string): string => `+SACK:GTHBD,${version},${count}$`;
/** every other message: `+SACK:<count>$`, the server acknowledgement a device with SACK enabled waits for */
export const sack = (count: string): string => `+SACK:${count}$`;

// Binary message types (Gl200BinaryProtocolDecoder)
export const RSP_LCB = 3; // +RSP location by call: a phone number follows the index
export const RSP_GEO = 8; // +RSP geofence: two reserved bytes before the motion status
export const RSP_COMPRESSED = 100; // +RSP compressed positions
export const INF_VER = 6;
export const INF_BAT = 7;
export const INF_CSQ = 5;
export const INF_GIR = 10;

/** +EVT type -> bytes of event-specific data before the position count (Gl200BinaryProtocolDecoder.decodeEvent) */
export const EVENT_EXTRA_BYTES: Readonly<Record<number, number>> = {
  6: 2, // BPL backup battery voltage
  45: 7, // VGN reserved u16, report type u8, ignition duration u32
  46: 7, // VGF
  15: 3, // UPD code u16, retry u8
  17: 4, // IDF idling duration
  21: 5, // GSS gps signal status u8, reserved u32
  26: 12, // GES geo id u16, enable u8, mode u8, radius u32, interval u32
  31: 2, // GPJ cw jamming value, gps jamming state
  35: 1, // RMD roaming state
  33: 1, // JDS jamming state
  23: 1, // CRA crash counter
  34: 3, // UPC command id u8, result u16
};

/** Binary +EVT type -> alarm, for the events decodeBasic raises in their text form */
export const EVENT_ALARMS: Readonly<Record<number, Alarm>> = {
  6: 'lowBattery', // EVT BPL
  33: 'jamming', // EVT JDS
};
