/**
 * OwnTracks JSON (the OwnTracks booklet, `owntracks/booklet/docs/tech/json.md` on GitHub) to the report every decoder returns (DecodedMessage).
 * Only `_type` `location` is a position; `lwt`, `transition`, `card`, `cmd`, `waypoint(s)`,
 * `status`, `steps`, `beacon`, `configuration` and `encrypted` (no key here) are accepted and ignored.
 *
 * Units: `tst` epoch seconds, `vel` km/h, `cog` degrees, `acc`/`alt`/`vac` metres, `batt` %,
 * Queclink `odometer` km (stored as metres, the core's `odometer` attribute unit).
 *
 * Not a ProtocolModule of protocols/index.ts (OwnTracks has no listener of its own): the MQTT
 * gateway decodes `owntracks/…` publishes with it (gateway/mqtt/mqtt.publish.ts).
 */
import type { DecodedMessage } from '../types.js';
import type { Alarm } from '../../core/model/alarm.js';

/**
 * OwnTracks trigger `t` codes that are alarms: the Queclink extensions (json.md "qtripp").
 * `i` / `I` (ignition on / off) set the `ignition` attribute instead; `1` (powered up), `h`
 * (harsh behaviour, kind unknown: acceleration, braking or cornering) and the app's own codes
 * (`p` ping, `c` / `C` region, `b` beacon, `r` response, `u` manual, `t` timer, `v` visit) are not
 * alarms; every code is kept as the `trigger` attribute.
 */
export const OWNTRACKS_TRIGGER_ALARMS: Readonly<Record<string, Alarm>> = Object.freeze({
  '!': 'tow',
  '9': 'lowBattery',
  e: 'powerCut',
  E: 'powerRestored',
  s: 'overspeed',
});

export type OwnTracksDecoded =
  | { kind: 'location'; report: DecodedMessage }
  /** a valid message of a type that is not a position */
  | { kind: 'ignored'; type: string }
  | { kind: 'malformed'; reason: string };

const finite = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const text = (v: unknown, max = 200): string | undefined => (typeof v === 'string' && v.length <= max ? v : undefined);

/** One OwnTracks JSON value (object, or the HTTP mode's array) to its reports. */
export function decodeOwnTracks(value: unknown, phone: string): OwnTracksDecoded[] {
  const items = Array.isArray(value) ? value.slice(0, 1000) : [value];
  return items.map((m) => decodeOne(m, phone));
}

function decodeOne(m: unknown, phone: string): OwnTracksDecoded {
  if (typeof m !== 'object' || m === null || Array.isArray(m))
    return { kind: 'malformed', reason: 'not a JSON object' };
  const o = m as Record<string, unknown>;
  const type = o._type;
  if (typeof type !== 'string') return { kind: 'malformed', reason: '_type is missing' };
  if (type !== 'location') return { kind: 'ignored', type };

  const lat = finite(o.lat);
  const lon = finite(o.lon);
  const tst = finite(o.tst);
  if (lat === undefined || lat < -90 || lat > 90)
    return { kind: 'malformed', reason: 'lat must be a number in -90..90' };
  if (lon === undefined || lon < -180 || lon > 180)
    return { kind: 'malformed', reason: 'lon must be a number in -180..180' };
  if (tst === undefined || tst <= 0) return { kind: 'malformed', reason: 'tst must be epoch seconds' };

  const attributes: DecodedMessage['attributes'] = { owntracksDevice: phone };
  const put = (key: string, v: string | number | boolean | undefined) => {
    if (v !== undefined) attributes[key] = v;
  };
  put('batteryLevel', finite(o.batt));
  put('batteryStatus', finite(o.bs));
  put('verticalAccuracy', finite(o.vac));
  put('pressure', finite(o.p));
  put('tid', text(o.tid, 8));
  put('conn', text(o.conn, 8));
  put('monitoringMode', finite(o.m));
  put('ssid', text(o.SSID));
  put('bssid', text(o.BSSID));
  put('trigger', text(o.t, 4));
  const odometerKm = finite(o.odometer);
  put('odometer', odometerKm !== undefined ? odometerKm * 1000 : undefined);
  put('battery', finite(o.ubatt));
  put('power', finite(o.uext));
  put('imei', text(o.imei, 32));
  put('vin', text(o.vin, 32));
  if (typeof o.ign === 'boolean') put('ignition', o.ign);
  if (typeof o.motion === 'boolean') put('motion', o.motion);
  if (o.t === 'i') put('ignition', true);
  if (o.t === 'I') put('ignition', false);

  const trigger = typeof o.t === 'string' ? OWNTRACKS_TRIGGER_ALARMS[o.t] : undefined;
  // The booklet omits acc, alt, cog, vac and vel when zero; an absent field is stored as unknown.
  const report: DecodedMessage = {
    fixTime: new Date(tst * 1000),
    location: {
      latitudeDeg: lat,
      longitudeDeg: lon,
      valid: true,
      speedKmh: finite(o.vel),
      courseDeg: finite(o.cog),
      altitudeM: finite(o.alt),
      accuracyM: finite(o.acc),
    },
    alarms: trigger ? [trigger] : [],
    attributes,
  };
  return { kind: 'location', report };
}
