import type { AttributeValue } from '../types.js';
import { isDigits, isHex8, isNoFixCoordinate, textCoordinate, textDate } from './h02.fields.js';

// The position block of text frames (`*HQ,<id>,V1,<hhmmss>,<A|V>,<lat>,<N|S>,<lon>,<E|W>,<speed>,
// <course>,<ddmmyy>,<status>[,...]#`), field by field as H02ProtocolDecoder.PATTERN reads it.

export interface TextPosition {
  /** absent when the frame has no date (the gateway then uses receive time) */
  fixTime?: Date;
  dateInvalid: boolean;
  valid: boolean;
  latitudeDeg: number;
  longitudeDeg: number;
  speedKnots: number;
  courseDeg?: number;
  status?: number;
  altitudeM?: number;
  attributes: Record<string, AttributeValue>;
}

/** why a block did not parse: `nofix` (the device sent empty or zero coordinates) or `layout` */
export type BlockFailure = 'nofix' | 'layout';

const NUMBER = /^\d+\.?\d*$/;

/** Reads the position block starting with the time field at `f[k]`. */
export function parsePositionBlock(f: readonly string[], k: number): TextPosition | BlockFailure {
  const [time, validity, lat, ns, lon, ew, speedField, course] = f.slice(k, k + 8);
  if (time === undefined || (time !== '' && !isDigits(time, 6))) return 'layout';
  if (validity === undefined) return 'layout';
  let valid: boolean;
  if (validity === '' || validity === 'A' || validity === 'B' || validity === 'V') valid = validity === 'A';
  else if (isDigits(validity))
    valid = true; // coding scheme instead of validity: a GPS fix
  else return 'layout';

  const latitudeDeg = textCoordinate(lat ?? '', ns ?? '', 'N');
  const longitudeDeg = textCoordinate(lon ?? '', ew ?? '', 'E');
  if (latitudeDeg === undefined || longitudeDeg === undefined) {
    return isNoFixCoordinate(lat) || isNoFixCoordinate(lon) ? 'nofix' : 'layout';
  }
  const speed = speedField?.trimStart();
  if (speed === undefined || !NUMBER.test(speed)) return 'layout';
  if (course === undefined || (course !== '' && !NUMBER.test(course))) return 'layout';

  const tail = readDateAndStatus(f, k + 8);
  if (!tail) return 'layout';
  const fixTime = tail.date ? textDate(tail.date, time) : undefined;
  return {
    fixTime,
    dateInvalid: tail.date !== '' && fixTime === undefined,
    valid,
    latitudeDeg,
    longitudeDeg,
    speedKnots: Number(speed),
    courseDeg: course === '' ? undefined : Number(course),
    status: tail.status,
    altitudeM: tail.altitudeM,
    attributes: tail.attributes,
  };
}

interface Tail {
  date: string;
  status?: number;
  altitudeM?: number;
  attributes: Record<string, AttributeValue>;
}

/** `[battery,]ddmmyy[,sim,phone,iccid],status[,odometer,temp,fuel,altitude,lac,cid | ,io...]` */
function readDateAndStatus(f: readonly string[], j: number): Tail | undefined {
  const attributes: Record<string, AttributeValue> = {};
  let date = '';
  if (j < f.length) {
    if (f[j] === '' || isDigits(f[j], 6)) {
      date = f[j++];
    } else if (isDigits(f[j]) && (j + 1 >= f.length || f[j + 1] === '' || isDigits(f[j + 1], 6))) {
      date = f[j + 1] ?? ''; // a battery field precedes the date; Traccar skips it
      j += 2;
    } else {
      return undefined;
    }
  }
  const rest = f.slice(j);
  if (rest.length === 0) return { date, attributes };
  let status: number | undefined;
  let extra: string[];
  if (isHex8(rest[0])) {
    status = parseInt(rest[0], 16);
    extra = rest.slice(1);
  } else if (rest.length >= 4 && isHex8(rest[3])) {
    const iccid = rest[2].replace(/[^0-9A-Za-z]/g, ''); // V19: `,<ip or phone>,<iccid>` before the status
    if (/^89\d{16,19}[0-9A-Fa-f]?$/.test(iccid)) attributes.iccid = iccid;
    status = parseInt(rest[3], 16);
    extra = rest.slice(4);
  } else if (rest.length === 3) {
    return { date, attributes };
  } else {
    return undefined;
  }
  const altitudeM = readSensors(extra, attributes);
  return { date, status, altitudeM, attributes };
}

/** Either the six sensor fields (returns the altitude) or numbered `io` values, as Traccar stores them. */
function readSensors(extra: string[], attributes: Record<string, AttributeValue>): number | undefined {
  const [odometer, temp, fuel, altitude, lac, cid] = extra;
  if (
    extra.length === 6 &&
    isDigits(odometer) &&
    /^-?\d+$/.test(temp) &&
    /^\d+\.\d+$/.test(fuel) &&
    /^-?\d+$/.test(altitude) &&
    /^[0-9A-Fa-f]+$/.test(lac) &&
    /^[0-9A-Fa-f]+$/.test(cid)
  ) {
    attributes.odometer = Number(odometer);
    attributes.temp1 = Number(temp);
    attributes.fuel = Number(fuel);
    return Number(altitude);
  }
  while (extra.length && extra[extra.length - 1] === '') extra = extra.slice(0, -1);
  extra.forEach((value, i) => {
    attributes[`io${i + 1}`] = value.trim();
  });
  return undefined;
}
