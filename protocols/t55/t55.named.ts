import type { AttributeValue, DecodedLocation } from '../types.js';
import { ProtocolError } from '../types.js';
import { nearestTimeOfDay } from '../shared/time.js';
import { PROTOCOL } from './t55.constants.js';
import { dateTime, type SentenceReader } from './t55.sentences.js';

// Sentences that name their device themselves.

function checked(lat: number, lon: number): { latitudeDeg: number; longitudeDeg: number } {
  if (!(Math.abs(lat) <= 90 && Math.abs(lon) <= 180))
    throw new ProtocolError(PROTOCOL, `coordinates ${lat},${lon} out of range`);
  return { latitudeDeg: lat, longitudeDeg: lon };
}

const signed = (deg: number, hemisphere: string): number => (hemisphere === 'S' || hemisphere === 'W' ? -deg : deg);
/** a signed decimal coordinate and its hemisphere: S and W make it negative, N and E keep its sign */
const hemisphere = (deg: number, h: string): number => (h === 'S' || h === 'W' ? -Math.abs(deg) : deg);
const course = (value: number): { courseDeg?: number } => (value <= 360 ? { courseDeg: value } : {});

/** `QZE,<imei>,<event>,ddmmyyyy,hhmmss,lat,lon,km/h,course,A|V,ignition` (decimal degrees) */
const QZE =
  /^QZE,(\d{15}),(\d+),(\d\d)(\d\d)(\d{4}),(\d\d)(\d\d)(\d\d),(-?\d+\.\d+),(-?\d+\.\d+),(\d+),(\d+),([AV]),([01])$/;

export const readQze: SentenceReader = (s) => {
  const g = QZE.exec(s);
  if (!g) throw new ProtocolError(PROTOCOL, 'a QZE line that matches no known layout');
  const location: DecodedLocation = {
    ...checked(Number(g[9]), Number(g[10])),
    valid: g[13] === 'A',
    speedKmh: Number(g[11]),
    ...course(Number(g[12])),
  };
  return {
    identity: g[1],
    message: {
      fixTime: dateTime(+g[5], +g[4], +g[3], +g[6], +g[7], +g[8]),
      location,
      alarms: [],
      attributes: { event: Number(g[2]), ignition: g[14] === '1' },
    },
  };
};

/**
 * u-blox `$PUBX,00,hhmmss.ss,lat,N,lon,E,altitude,status,hacc,vacc,km/h,course,vvel,age,hdop,vdop,
 * tdop,satellites,<device id>,...*cs` (status NF: no fix); the device id is written in place of the
 * DR field. No date.
 */
const PUBX =
  /^\$PUBX,(\d+),(\d\d)(\d\d)(\d\d)\.\d+,(\d\d)(\d\d\.\d+),([NS]),(\d{3})(\d\d\.\d+),([EW]),(-?\d+\.\d+),(..),(\d+\.\d+),\d+\.\d+,(\d+\.\d+),(\d+\.\d+),-?\d+\.\d+,[^,]*,(\d+\.\d+),(\d+\.\d+),\d+\.\d+,(\d+),(\d+),\d+\*[0-9a-fA-F]{2}$/;

export const readPubx: SentenceReader = (s, now) => {
  const g = PUBX.exec(s);
  if (!g) throw new ProtocolError(PROTOCOL, 'a PUBX sentence that matches no known layout');
  const [h, m, sec] = [+g[2], +g[3], +g[4]];
  if (h > 23 || m > 59 || sec > 59) throw new ProtocolError(PROTOCOL, `no such time ${g[2]}${g[3]}${g[4]}`);
  const satellites = Number(g[18]);
  const location: DecodedLocation = {
    ...checked(signed(+g[5] + +g[6] / 60, g[7]), signed(+g[8] + +g[9] / 60, g[10])),
    valid: g[12] !== 'NF',
    altitudeM: Number(g[11]),
    accuracyM: Number(g[13]),
    speedKmh: Number(g[14]),
    ...course(Number(g[15])),
    satellites,
  };
  return {
    identity: g[19],
    message: {
      fixTime: nearestTimeOfDay(now, h, m, sec),
      location,
      alarms: [],
      attributes: { index: Number(g[1]), hdop: Number(g[16]), vdop: Number(g[17]), sat: satellites },
    },
  };
};

/** `$GPTXT,NET,<device id>,<operator>,<rssi dBm>,<mcc> <mnc>*cs`: the network, no fix */
const GPTXT = /^\$GPTXT,NET,(\d+),([^,]+),(-\d+),(\d+) (\d+)\*[0-9a-fA-F]{2}$/;

export const readGptxt: SentenceReader = (s) => {
  const g = GPTXT.exec(s);
  if (!g) throw new ProtocolError(PROTOCOL, 'a GPTXT sentence that matches no known layout');
  const attributes = { operator: g[2], rssi: Number(g[3]), mcc: Number(g[4]), mnc: Number(g[5]) };
  return { identity: g[1], message: { alarms: [], attributes } };
};

/**
 * WMCS `$ID,<imei>,...,GPSE[XHTD],A|V[,D,ddmmyy][,T,hhmmss][,S,visible:used][,La,deg,N|S]
 * [,Lo,deg,E|W][,H,course][,V,km/h][,DD,distance],...`. An `ALARM,0x...,` right after the IMEI is
 * kept as the raw `alarm` attribute, as Traccar reads it (its lazy match sees no later one).
 */
const WMCS =
  /^\$ID,(\d+),.*?(?:ALARM,(0x[0-9a-fA-F]+),)?.*?GPSE[XHTD],([AV])(?:,D,(\d\d)(\d\d)(\d\d))?(?:,T,(\d\d)(\d\d)(\d\d))?(?:,S,(\d+):(\d+))?(?:,La,(-?\d+\.\d+),([NS]))?(?:,Lo,(-?\d+\.\d+),([EW]))?(?:,H,(\d+\.\d+))?(?:,V,(\d+\.\d+))?(?:,DD,(\d+))?.*$/s;

export const readWmcs: SentenceReader = (s) => {
  const g = WMCS.exec(s);
  if (!g) throw new ProtocolError(PROTOCOL, 'a WMCS $ID line that matches no known layout');
  const a: Record<string, AttributeValue> = {};
  if (g[2] !== undefined) a.alarm = g[2];
  if (g[10] !== undefined) {
    a.satVisible = Number(g[10]);
    a.sat = Number(g[11]);
  }
  if (g[18] !== undefined) a.totalDistance = Number(g[18]);
  const fixTime =
    g[4] !== undefined && g[7] !== undefined ? dateTime(+g[6], +g[5], +g[4], +g[7], +g[8], +g[9]) : undefined;
  const hasFix = g[12] !== undefined && g[14] !== undefined;
  const location: DecodedLocation | undefined = hasFix
    ? {
        ...checked(hemisphere(+g[12], g[13]), hemisphere(+g[14], g[15])),
        valid: g[3] === 'A',
        ...(g[16] !== undefined && course(Number(g[16]))),
        ...(g[17] !== undefined && { speedKmh: Number(g[17]) }),
        ...(g[11] !== undefined && { satellites: Number(g[11]) }),
      }
    : undefined;
  return {
    identity: g[1],
    message: { ...(fixTime && { fixTime }), ...(location && { location }), alarms: [], attributes: a },
  };
};
