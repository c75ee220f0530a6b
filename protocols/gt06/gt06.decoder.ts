import { ProtocolError, type DecodeContext, type DecodeResult } from '../types.js';
import { crc16X25 } from '../shared/crc.js';
import { ByteReader } from '../shared/byte-reader.js';
import type { Gt06Env, Outcome } from './gt06.blocks.js';
import * as C from './gt06.constants.js';
import {
  BASIC_VARIANTS,
  LOCATION_RFID_LENGTH,
  NT_MODELS,
  PROTOCOL,
  SESSION_TZ,
  VL_MODELS,
  type ModelFlags,
  type Variant,
} from './gt06.constants.js';
import * as S from './gt06.session.messages.js';
import * as L from './gt06.position.messages.js';
import * as I from './gt06.info.messages.js';
import * as N from './gt06.network.messages.js';
import * as P from './gt06.media.messages.js';

type Handler = (r: ByteReader, env: Gt06Env) => Outcome;

/**
 * A type this decoder does not read (or a family type without a block it reads): nothing stored and
 * nothing acknowledged, since the tracker takes an echo for "received" (Traccar echoes every 0x7878
 * type but command replies; trackgate acknowledges only what it understood and stored).
 */
const decodeUnknown: Handler = (_r, env) => ({
  messages: [],
  replies: [],
  warnings: [`type 0x${env.type.toString(16).padStart(2, '0')} is not decoded: not acknowledged`],
});

/** A type of the GPS/LBS/status family, when it is not one of the layouts named before it. */
const family: Handler = (r, env) => (L.isPositionFamily(env) ? L.decodePositionFamily(r, env) : decodeUnknown(r, env));

/**
 * One handler per protocol number. Several numbers mean different things by start (0x7878 or
 * 0x7979), length variant or model; those handlers choose (Traccar `Gt06ProtocolDecoder.decode`).
 * The handlers live by message family in gt06.<family>.messages.ts: S session, L position (and
 * alarm), I information, N cell and Wi-Fi lists, P photos.
 */
const HANDLERS: Record<number, Handler> = {
  [C.MSG_LOGIN]: S.decodeLogin,
  [C.MSG_HEARTBEAT]: S.decodeHeartbeat,
  [C.MSG_ADDRESS_REQUEST]: () => S.decodeAddressRequest(),
  [C.MSG_TIME_REQUEST]: S.decodeTimeRequest,
  [C.MSG_X1_GPS]: (r, env) => (env.variant === 'SL4X' ? N.decodeLbsMultiple(r, env) : L.decodeX1Gps(r, env)),
  [C.MSG_X1_PHOTO_INFO]: P.decodePhotoInfo,
  [C.MSG_WIFI]: (r, env) => (env.variant === 'RFID' ? family(r, env) : N.decodeWifi(r, env)),
  [C.MSG_WIFI_2]: N.decodeWifi,
  [C.MSG_WIFI_4]: N.decodeWifi,
  [C.MSG_INFO]: (r, env) => (env.extended ? I.decodeInfo(r, env) : I.decodeInfoBasic(r)),
  [C.MSG_LBS_MULTIPLE_3]: (r, env) =>
    env.variant === 'SR411_MINI' ? L.decodeSr411(r, env) : N.decodeLbsMultiple(r, env),
  [C.MSG_LBS_MULTIPLE_1]: N.decodeLbsMultiple,
  [C.MSG_LBS_MULTIPLE_2]: N.decodeLbsMultiple,
  [C.MSG_LBS_EXTEND]: N.decodeLbsMultiple,
  [C.MSG_LBS_WIFI]: N.decodeLbsMultiple,
  [C.MSG_LBS_2]: N.decodeLbsMultiple,
  [C.MSG_WIFI_ALARM]: N.decodeLbsMultiple,
  [C.MSG_WIFI_3]: (r, env) => (env.variant === 'LW4G' ? family(r, env) : N.decodeLbsMultiple(r, env)),
  [C.MSG_WIFI_5]: (r, env) => (env.extended ? I.decodeAz735(r, env) : N.decodeLbsMultiple(r, env)),
  [C.MSG_AZ735_GPS]: (r, env) => (env.extended ? I.decodeAz735(r, env) : family(r, env)),
  [C.MSG_BLUETOOTH_CLOCK]: I.decodeBluetoothClock,
  [C.MSG_STRING]: I.decodeString,
  [C.MSG_BMS]: I.decodeBms,
  [C.MSG_STATUS]: (r, env) => (r.remaining === 22 ? L.decodeStatusTemperature(r, env) : family(r, env)),
  [C.MSG_IBUTTON]: L.decodeIButton,
  [C.MSG_X1_PHOTO_DATA]: (r, env) => {
    if (env.extended) return P.decodePhotoData(r, env);
    // VL103 GPS + LBS + RFID starts with a date; the Jimi 4G heartbeat with modules does not
    const located = env.length === LOCATION_RFID_LENGTH || (env.models.vl && env.dataLength >= 18 + 9);
    return located && plausibleDate(env.frame, r.offset) ? L.decodeLocationRfid(r, env) : family(r, env);
  },
  [C.MSG_ALARM]: L.decodeJcAlarm,
  [C.MSG_STRING_INFO]: I.decodeStringInfo,
  [C.MSG_OBD]: I.decodeObd,
  [C.MSG_GPS_MODULAR]: I.decodeModular,
  [C.MSG_MULTIMEDIA]: I.decodeMultimedia,
  [C.MSG_SERIAL]: I.decodeSerial,
  [C.MSG_PERIPHERAL]: I.decodeStatusItems,
  [C.MSG_DEVICE_STATUS]: I.decodeStatusItems,
  [C.MSG_GPS_LBS_8]: L.decodeGpsLbs8,
};

/** `YY MM DD hh mm ss` at `offset` is a calendar date and time */
function plausibleDate(frame: Buffer, offset: number): boolean {
  if (frame.length < offset + 6) return false;
  const [, mo, d, h, mi, s] = frame.subarray(offset, offset + 6);
  return mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h < 24 && mi < 60 && s < 60;
}

function detectVariant(frame: Buffer, extended: boolean, length: number, type: number): Variant {
  if (extended) return 'STANDARD';
  if (type === C.MSG_ALARM && frame.length >= 6 && frame.readUInt16BE(4) === 0xffff) return 'JC400';
  for (const [t, test, variant] of BASIC_VARIANTS) if (t === type && test(length)) return variant;
  return 'STANDARD';
}

function modelFlags(raw: string | undefined): ModelFlags {
  const model = raw ? raw.toUpperCase() : undefined;
  return {
    model,
    lw: model?.startsWith('LW') ?? false,
    seeworld: model === 'SEEWORLD',
    nt: model !== undefined && NT_MODELS.has(model),
    vl: model !== undefined && VL_MODELS.has(model),
  };
}

/** CRC-16/X-25 over length..serial against the u16 before `0D 0A`; the problem, or an error when strict. */
function checkCrc(frame: Buffer, headerLength: number, ctx: DecodeContext): string | undefined {
  const end = frame.length;
  let problem: string | undefined;
  if (end < headerLength + 1 + 6) problem = 'frame too short to carry serial and CRC';
  else {
    const expected = frame.readUInt16BE(end - 4);
    const actual = crc16X25(frame, 2, end - 4);
    if (expected !== actual)
      problem = `CRC mismatch: frame ${expected.toString(16).padStart(4, '0')}, computed ${actual.toString(16).padStart(4, '0')}`;
  }
  if (!problem) return undefined;
  if (ctx.checksum === 'strict') throw new ProtocolError(PROTOCOL, problem, frame);
  return problem;
}

/**
 * Decodes one frame as cut by the splitter: `78 78 | u8 len | type | content | serial | CRC | 0D 0A`
 * or `79 79 | u16 len | ...` (docs/protocols.md 3.2). `ctx.model` (the device record's model, e.g.
 * "LW4G", "VL103", "XT40"; any case) picks model-specific layouts and alarm meanings; the login
 * writes the session key `gt06.tzOffsetMin`.
 */
export function decodeGt06(frame: Buffer, ctx: DecodeContext): DecodeResult {
  if (frame.length < 5) throw new ProtocolError(PROTOCOL, 'frame shorter than its header', frame);
  const start = frame.readUInt16BE(0);
  if (start !== 0x7878 && start !== 0x7979)
    throw new ProtocolError(PROTOCOL, 'frame does not start with 7878 or 7979', frame);
  const extended = start === 0x7979;
  const headerLength = extended ? 4 : 3;
  if (frame.length < headerLength + 1) throw new ProtocolError(PROTOCOL, 'frame has no protocol number', frame);
  const length = extended ? frame.readUInt16BE(2) : frame[2];
  const type = frame[headerLength];
  const checksumError = checkCrc(frame, headerLength, ctx);
  const tz = ctx.session[SESSION_TZ];
  const env: Gt06Env = {
    frame,
    extended,
    type,
    length,
    dataLength: length - 5,
    serial: frame.length >= headerLength + 1 + 6 ? frame.readUInt16BE(frame.length - 6) : undefined,
    variant: detectVariant(frame, extended, length, type),
    models: modelFlags(ctx.model),
    tzOffsetMin: typeof tz === 'number' && Number.isFinite(tz) ? tz : 0,
    ctx,
  };
  const reader = new ByteReader(PROTOCOL, frame, headerLength + 1);
  const handler = HANDLERS[type] ?? family;
  const out = handler(reader, env);
  const result: DecodeResult = { messages: out.messages, replies: out.replies };
  if (out.identity !== undefined) result.identity = out.identity;
  if (out.commandResults?.length) result.commandResults = out.commandResults;
  const warnings = [...(out.warnings ?? []), ...(checksumError ? [checksumError] : [])];
  if (warnings.length) result.warnings = warnings;
  if (checksumError) result.checksumError = checksumError;
  return result;
}
