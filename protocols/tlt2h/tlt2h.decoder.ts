import type { AttributeValue, DecodeContext, DecodeResult, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import { xor8 } from '../shared/crc.js';
import { NMEA_CHECKSUM, PATTERN_HEADER, PROTOCOL, STATUS_ALARMS, STATUS_IGNITION } from './tlt2h.constants.js';
import { decodeRmc, decodeWifi, type RecordOutcome } from './tlt2h.records.js';

/** What the header line says of every record of the message. */
interface Header {
  imei: string;
  status: string;
  /** door, adc1, power, battery, temp1 of the models that write them */
  attributes: Record<string, AttributeValue>;
}

function fail(text: string, reason: string): never {
  throw new ProtocolError(PROTOCOL, reason, Buffer.from(text, 'latin1'));
}

/** Java's String.trim: every character up to a space, at both ends */
const javaTrim = (s: string): string => s.replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, '');

/** Java's String.split: trailing empty parts are dropped, unless the separator never occurs */
function javaSplit(s: string, separator: string): string[] {
  const parts = s.split(separator);
  if (parts.length === 1) return parts;
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

function parseHeader(sentence: string): Header {
  const cr = sentence.indexOf('\r');
  if (cr < 0) fail(sentence, 'no header line');
  const g = PATTERN_HEADER.exec(sentence.substring(0, cr));
  if (!g) fail(sentence, 'the header is not #<imei>#<model>#<password>#<status>#<count>');
  const attributes: Record<string, AttributeValue> = {};
  if (g[2] !== undefined) {
    attributes.door = g[2] === '1';
    attributes.adc1 = Number(g[3]) / 10;
    attributes.power = Number(g[4]) / 10;
    attributes.battery = Number(g[5]) / 10;
    attributes.temp1 = Number(g[6]) / 10;
  }
  return { imei: g[1], status: g[7], attributes };
}

/** The header's values (its battery wins over the record's) and the status: ignition or an alarm. */
function applyHeader(m: DecodedMessage, h: Header): void {
  Object.assign(m.attributes, h.attributes);
  if (Object.hasOwn(STATUS_IGNITION, h.status)) m.attributes.ignition = STATUS_IGNITION[h.status];
  if (Object.hasOwn(STATUS_ALARMS, h.status)) m.alarms.push(STATUS_ALARMS[h.status]);
}

/** A record line: `$GPRMC`, `$WIFI`, or anything else (the device's state only, no fix). */
function decodeRecord(line: string): RecordOutcome {
  if (line.includes('$GPRMC')) return decodeRmc(line);
  if (line.includes('$WIFI')) return decodeWifi(line);
  return { message: { alarms: [], attributes: {} } };
}

/** The NMEA XOR of a record's `$…*xx` sentence; the reference checks none. */
function checksumProblem(line: string): string | undefined {
  const g = NMEA_CHECKSUM.exec(line);
  if (!g) return undefined;
  const start = line.indexOf(g[0]) + 1;
  const sum = xor8(Buffer.from(line, 'latin1'), start, start + g[1].length);
  const written = Number.parseInt(g[2], 16);
  return sum === written
    ? undefined
    : `checksum ${g[2]} does not match ${sum.toString(16).toUpperCase().padStart(2, '0')}`;
}

/**
 * One message as the splitter cuts it (its `##\r\n` removed; a frame given whole may still end
 * with `##`), or one UDP datagram. Every record line becomes one message; lines the reference
 * cannot read are skipped.
 */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  const sentence = javaTrim(frame.toString('latin1'));
  const header = parseHeader(sentence);
  const from = sentence.indexOf('\n') + 1;
  const to = sentence.endsWith('##') ? sentence.length - 4 : sentence.length;
  if (to < from) fail(sentence, 'the records end before they start');
  const lines = javaSplit(sentence.substring(from, to), '\r\n');
  const messages: DecodedMessage[] = [];
  const warnings: string[] = [];
  let checksumError: string | undefined;
  for (const line of lines) {
    const problem = checksumProblem(line);
    if (problem && ctx.checksum === 'strict') fail(line, problem);
    checksumError ??= problem;
    const { message, warning } = decodeRecord(line);
    if (!message) continue;
    if (warning) warnings.push(warning);
    applyHeader(message, header);
    messages.push(message);
  }
  if (checksumError) warnings.push(checksumError);
  return {
    identity: header.imei,
    messages,
    replies: [],
    ...(warnings.length > 0 && { warnings }),
    ...(checksumError && { checksumError }),
  };
}
