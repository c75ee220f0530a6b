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
import { isoUtc } from '../model/time.js';
import type { LocationRow } from '../locations/locations.repository.js';
import type { Logger } from '../logger.js';

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
  const problem = positionProblem({
    latitude: l.latitudeDeg,
    longitude: l.longitudeDeg,
    speed: l.speedKmh,
    course: l.courseDeg,
  });
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
  const a = d.report.attributes;
  if (a !== undefined && !needsCleaning(a)) return;
  const out: PositionReport['attributes'] = {};
  let size = 2;
  let changed = false;
  for (const [key, value] of Object.entries(a ?? {})) {
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

/** The longest JSON text of a finite number: sign, `0.`, 5 zeros and 17 significant digits. */
const MAX_NUMBER_JSON = 25;

/**
 * False when the attributes step would leave `a` as it is: only strings and keys without NUL,
 * finite numbers and booleans, and an upper bound of the size (numbers at their longest) within
 * MAX_ATTRIBUTES_JSON. Cheap (no String() per number, nothing allocated but the key list); when
 * it says true, the step above decides exactly.
 */
function needsCleaning(a: Record<string, unknown>): boolean {
  const keys = Object.keys(a);
  let bound = 2;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    const v = a[key];
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return true;
      bound += v.length + 2;
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) return true;
      bound += MAX_NUMBER_JSON;
    } else if (typeof v === 'boolean') {
      bound += 5;
    } else {
      return true;
    }
    if (key.includes('\u0000')) return true;
    bound += key.length + 4;
  }
  return bound > MAX_ATTRIBUTES_JSON;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * The REST location shape (docs/contract.md "Location fields"): a client's location as given, a
 * tracker's made of its report, units already normalised by decoders. A value the sender did not
 * report is left out, never null.
 */
const toLocation: Step = (d) => {
  const l = d.report.location;
  if (!l) return;
  const given = d.report.given;
  if (given) {
    // The report's own copy (input.reports.ts), completed in place: the keys end in the order a
    // spread would give them ({ ...given, dateTime, serverTime, protocol }), at a twentieth of the
    // cost (a spread followed by more keys took 1.4 µs here, about 4 % of an MQTT message).
    given.dateTime = isoUtc(d.fixTime.getTime());
    given.serverTime = d.serverTime;
    given.protocol = d.protocol;
    d.location = given;
    return;
  }
  const a = d.report.attributes;
  const odometerM = num(a.odometer) ?? num(a.totalDistance);
  // Named stores in one fixed order (the stored JSON's key order): every location gets the same
  // hidden classes, which keeps building and serialising it cheap.
  const loc: Location = {
    dateTime: isoUtc(d.fixTime.getTime()),
    latitude: l.latitudeDeg,
    longitude: l.longitudeDeg,
  };
  if (l.speedKmh !== undefined) loc.speed = l.speedKmh;
  if (l.courseDeg !== undefined) loc.course = l.courseDeg;
  if (l.altitudeM !== undefined) loc.altitude = l.altitudeM;
  if (l.accuracyM !== undefined) loc.accuracy = l.accuracyM;
  const satellites = l.satellites ?? num(a.sat);
  if (satellites !== undefined) loc.satellites = satellites;
  if (l.valid !== undefined) loc.valid = l.valid;
  const battery = num(a.batteryLevel);
  if (battery !== undefined) loc.battery = battery;
  const fuel = num(a.fuel) ?? num(a.fuel1);
  if (fuel !== undefined) loc.fuel = fuel;
  const temperature = num(a.temp1) ?? num(a.deviceTemp);
  if (temperature !== undefined) loc.temperature = temperature;
  const temperature2 = num(a.temp2);
  if (temperature2 !== undefined) loc.temperature2 = temperature2;
  const rpm = num(a.rpm);
  if (rpm !== undefined) loc.rpm = rpm;
  if (odometerM !== undefined) loc.milleage = odometerM / 1000;
  const alarms = d.report.alarms;
  loc.alerts = alarms.length === 0 ? [] : alarms.map((x) => ALERT_NAME_BY_ALARM[x]);
  loc.hasCriticalAlert = alarms.length !== 0 && alarms.some((x) => CRITICAL_ALARMS.has(x));
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
  // most reports raise nothing: no Set for them
  if (d.report.alarms?.length) {
    for (const alarm of new Set(d.report.alarms)) {
      d.alerts.push({
        dateTime: isoUtc(d.fixTime.getTime()),
        latitude: l?.latitudeDeg,
        longitude: l?.longitudeDeg,
        alertName: ALERT_NAME_BY_ALARM[alarm],
        text: `${ALERT_NAME_BY_ALARM[alarm]} reported by the tracker (${d.protocol})`,
        alerts: [ALERT_NAME_BY_ALARM[alarm]],
      });
    }
  }
  if (d.report.raised) d.alerts.push(...d.report.raised);
};

export const INGEST_STEPS: readonly Step[] = [fixTime, sanity, attributes, toLocation, toAlerts];

export function runSteps(
  report: Report,
  protocol: string,
  receivedAt: Date,
  serverTime = isoUtc(receivedAt.getTime()),
): Draft {
  const d: Draft = { report, protocol, receivedAt, serverTime, fixTime: receivedAt, alerts: [] };
  for (const step of INGEST_STEPS) {
    step(d);
    if (d.drop) break;
  }
  return d;
}

/** A submission's reports after the steps: rows to write, alerts to raise, and why positions were not stored. */
export interface Prepared {
  rows: LocationRow[];
  alerts: AlertInput[];
  dropped: string[];
}

/** allOrNothing: the position that failed the checks (its index and field), and why. */
export interface Refusal {
  refused: { index: number; field: string; message: string };
  why: string;
}

/**
 * A device's reports through the steps, received at `receivedAt`: the rows to write and the alerts
 * to raise, or, with `allOrNothing` (a client's message), the first position that failed the
 * checks. Pure: the core runs it for what reaches it whole, a gateway process for what it decoded
 * (gateway/ipc/core-link.client.ts), so that the core only writes.
 */
export function prepareReports(
  deviceId: string,
  protocol: string,
  reports: readonly Report[],
  receivedAt: Date,
  allOrNothing = false,
): Prepared | Refusal {
  const serverTime = isoUtc(receivedAt.getTime());
  const rows: LocationRow[] = [];
  const alerts: AlertInput[] = [];
  const dropped: string[] = [];
  for (let i = 0; i < reports.length; i++) {
    const d = runSteps(reports[i], protocol, receivedAt, serverTime);
    if (d.refused && allOrNothing)
      return { refused: { index: i, field: d.refused.field, message: d.refused.message }, why: why(d) };
    if (d.drop) {
      dropped.push(d.drop);
      continue;
    }
    if (d.refused) dropped.push(why(d));
    if (d.location)
      rows.push({ deviceId, dateTime: d.fixTime.getTime(), serverTime: receivedAt.getTime(), location: d.location });
    if (d.alerts.length) alerts.push(...d.alerts);
  }
  return { rows, alerts, dropped };
}

/** The check a report's position failed, for the log: field, the fix time it had, reason. */
function why(d: Draft): string {
  const r = d.refused!;
  return r.field === 'dateTime'
    ? fixTimeDropped(d.report.fixTime?.getTime() ?? NaN, r.message)
    : `${r.field} ${r.message}`;
}

/** Why a fix time was not stored, for the log: the time (epoch ms; `invalid` when no date has it) and the check's message. */
export function fixTimeDropped(fixMs: number, message: string): string {
  const fix = new Date(fixMs);
  return `fix time ${Number.isNaN(fix.getTime()) ? 'invalid' : fix.toISOString()}: ${message}`;
}

/** Logs the positions of a submission that were not stored, and why (prepareReports' `dropped`). */
export function warnDropped(logger: Logger, deviceId: string, protocol: string, dropped: readonly string[]): void {
  if (dropped.length) logger.warn({ deviceId, protocol, dropped }, 'positions that fail the checks are not stored');
}
