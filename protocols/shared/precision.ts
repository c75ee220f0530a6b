/**
 * The one place decoded positions are rounded (docs/tracker-gateway.md "Units"): every protocol's results pass
 * here as they leave protocols/ (index.ts wraps each module), so what is stored, served, forwarded,
 * printed by `trackgate decode` and shown on the raw-frame feed is the same number, free of the
 * floating-point noise unit conversions leave (35 kn * 1.852 = 64.82000000000001 km/h).
 *
 * Precision: speed (km/h), course (degrees), altitude and accuracy (m) to 2 decimals;
 * latitude and longitude to 7 decimals (about 1 cm), the finest any of these trackers sends
 * (Teltonika's 1e-7 degrees; NMEA minutes to 4 or 5 decimals are 1.7e-6 or 1.7e-7 degrees).
 * Attributes are kept as the decoder read them.
 */
import type { DecodeResult, DecodedLocation, HttpDecodeResult, ProtocolModule } from '../types.js';

export const COORDINATE_DECIMALS = 7;
export const VALUE_DECIMALS = 2;

const COORDINATE_SCALE = 10 ** COORDINATE_DECIMALS;
const VALUE_SCALE = 10 ** VALUE_DECIMALS;

const round = (value: number, scale: number): number => Math.round(value * scale) / scale;

/** Rounds one location in place to the precision above. */
export function roundLocation(l: DecodedLocation): void {
  l.latitudeDeg = round(l.latitudeDeg, COORDINATE_SCALE);
  l.longitudeDeg = round(l.longitudeDeg, COORDINATE_SCALE);
  if (l.speedKmh !== undefined) l.speedKmh = round(l.speedKmh, VALUE_SCALE);
  if (l.courseDeg !== undefined) l.courseDeg = round(l.courseDeg, VALUE_SCALE);
  if (l.altitudeM !== undefined) l.altitudeM = round(l.altitudeM, VALUE_SCALE);
  if (l.accuracyM !== undefined) l.accuracyM = round(l.accuracyM, VALUE_SCALE);
}

/** Rounds every location of a decoder's result in place (its messages are the decoder's own, made for this call). */
export function rounded<R extends DecodeResult>(result: R): R {
  const messages = result.messages;
  for (let i = 0; i < messages.length; i++) {
    const l = messages[i].location;
    if (l) roundLocation(l);
  }
  return result;
}

/** The module with every decode function's result rounded. */
export function withRoundedPositions(p: ProtocolModule): ProtocolModule {
  const { decode, decodeDatagram, decodeHttp } = p;
  return {
    ...p,
    ...(decode && { decode: (frame, ctx): DecodeResult => rounded(decode(frame, ctx)) }),
    ...(decodeDatagram && { decodeDatagram: (datagram, ctx): DecodeResult => rounded(decodeDatagram(datagram, ctx)) }),
    ...(decodeHttp && { decodeHttp: (request, ctx): HttpDecodeResult => rounded(decodeHttp(request, ctx)) }),
  };
}
