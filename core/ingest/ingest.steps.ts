/**
 * THE ordered list of steps every report goes through before it is stored, whatever carried it
 * (a tracker frame, OwnTracks, REST, MQTT in the REST shape). Each step reads and adds to the
 * draft; a step that sets `drop` stops the report. Adding a step is a new function and one line
 * in INGEST_STEPS.
 */
import type { PositionReport, Report } from '../model/report.js';
import type { Location } from '../model/location.js';
import type { AlertInput } from '../model/alert.js';
import { ALERT_NAME_BY_ALARM, CRITICAL_ALARMS } from '../alerts/alarm-names.js';
import { fixTimeProblem, positionProblem, type Checked } from './location.checks.js';
import { MAX_ATTRIBUTES_JSON } from './json.limits.js';

export interface Draft {
  report: Report;
  protocol: string;
  receivedAt: Date;
  /** receivedAt as ISO 8601, formatted once per batch */
  serverTime: string;
  fixTime: Date;
  location?: Location;
  alerts: AlertInput[];
  /** the check the report's position failed: it is not stored (its alarms still become alerts) */
  refused?: Checked;
  drop?: string;
}

type Step = (d: Draft) => void;

/**
 * Fix time: the device's, or the receive time when it sent none. A position whose fix time fails
 * the shared checks (before 2000, more than 25 h ahead) is not stored; the report's alarms are
 * still raised, at the receive time.
 */
const fixTime: Step = (d) => {
  d.fixTime = d.report.fixTime ?? d.receivedAt;
  const problem = fixTimeProblem(d.fixTime.getTime(), d.receivedAt.getTime());
  if (!problem) return;
  if (d.report.location) d.refused = problem;
  d.report = { ...d.report, location: undefined };
  d.fixTime = d.receivedAt;
};

/**
 * Coordinates, speed and course must pass the shared checks, or the position is not stored;
 * (0, 0) with an invalid fix is a tracker without a fix yet.
 */
const sanity: Step = (d) => {
  const l = d.report.location;
  if (!l) return;
  const problem = positionProblem({ latitude: l.latitudeDeg, longitude: l.longitudeDeg, speed: l.speedKmh, course: l.courseDeg });
  if (problem) {
    d.refused = problem;
    d.report = { ...d.report, location: undefined };
  } else if (!l.valid && l.latitudeDeg === 0 && l.longitudeDeg === 0) {
    d.report = { ...d.report, location: undefined };
  }
};

/**
 * Decoders' attributes are flat: strings, finite numbers and booleans. Anything else is left out,
 * NUL characters are taken out of strings (PostgreSQL cannot store them), and past
 * MAX_ATTRIBUTES_JSON characters of JSON the remaining attributes are left out. (A client's
 * attributes are part of the location it gave, bounded by the input schemas where it arrived.)
 */
const attributes: Step = (d) => {
  const out: PositionReport['attributes'] = {};
  let size = 2;
  let changed = false;
  for (const [key, value] of Object.entries(d.report.attributes ?? {})) {
    let v: string | number | boolean | undefined;
    if (typeof value === 'string') v = value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;
    else if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean') v = value;
    const k = key.includes('\u0000') ? key.replaceAll('\u0000', '') : key;
    size += k.length + 4 + (typeof v === 'string' ? v.length + 2 : String(v).length);
    if (v === undefined || size > MAX_ATTRIBUTES_JSON) {
      changed = true;
      continue;
    }
    if (v !== value || k !== key) changed = true;
    out[k] = v;
  }
  if (changed) d.report = { ...d.report, attributes: out };
};

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * The REST location shape (CONTRACT.md "Location fields"): a client's location as given, a
 * tracker's made of its report, units already normalised by decoders. A value the sender did not
 * report is left out, never null.
 */
const toLocation: Step = (d) => {
  const l = d.report.location;
  if (!l) return;
  if (d.report.given) {
    d.location = { ...d.report.given, dateTime: d.fixTime.toISOString(), serverTime: d.serverTime, protocol: d.protocol };
    return;
  }
  const a = d.report.attributes;
  const odometerM = num(a.odometer) ?? num(a.totalDistance);
  const loc: Location = {
    dateTime: d.fixTime.toISOString(),
    latitude: l.latitudeDeg,
    longitude: l.longitudeDeg,
  };
  const put = <K extends keyof Location>(key: K, value: Location[K] | undefined) => {
    if (value !== undefined) loc[key] = value;
  };
  put('speed', l.speedKmh);
  put('course', l.courseDeg);
  put('altitude', l.altitudeM);
  put('accuracy', l.accuracyM);
  put('satellites', l.satellites ?? num(a.sat));
  put('valid', l.valid);
  put('battery', num(a.batteryLevel));
  put('fuel', num(a.fuel) ?? num(a.fuel1));
  put('temperature', num(a.temp1) ?? num(a.deviceTemp));
  put('temperature2', num(a.temp2));
  put('rpm', num(a.rpm));
  put('milleage', odometerM !== undefined ? odometerM / 1000 : undefined);
  loc.alerts = d.report.alarms.map((x) => ALERT_NAME_BY_ALARM[x]);
  loc.hasCriticalAlert = d.report.alarms.some((x) => CRITICAL_ALARMS.has(x));
  loc.attributes = a;
  if (typeof a.ignition === 'boolean') loc.inputs = [a.ignition];
  loc.serverTime = d.serverTime;
  loc.protocol = d.protocol;
  d.location = loc;
};

/**
 * Every alarm becomes an alert, at the fix's place and time (without a fix: the last location's
 * place); an alert a client raised is taken as it is.
 */
const toAlerts: Step = (d) => {
  const l = d.report.location;
  for (const alarm of new Set(d.report.alarms)) {
    d.alerts.push({
      dateTime: d.fixTime.toISOString(),
      latitude: l?.latitudeDeg,
      longitude: l?.longitudeDeg,
      alertName: ALERT_NAME_BY_ALARM[alarm],
      text: `${ALERT_NAME_BY_ALARM[alarm]} reported by the tracker (${d.protocol})`,
      alerts: [ALERT_NAME_BY_ALARM[alarm]],
    });
  }
  if (d.report.raised) d.alerts.push(...d.report.raised);
};

export const INGEST_STEPS: readonly Step[] = [fixTime, sanity, attributes, toLocation, toAlerts];

export function runSteps(report: Report, protocol: string, receivedAt: Date, serverTime = receivedAt.toISOString()): Draft {
  const d: Draft = { report, protocol, receivedAt, serverTime, fixTime: receivedAt, alerts: [] };
  for (const step of INGEST_STEPS) {
    step(d);
    if (d.drop) break;
  }
  return d;
}
