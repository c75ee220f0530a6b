/**
 * THE ordered list of steps a tracker report goes through before it is stored. Each step reads
 * and adds to the draft; a step that sets `drop` stops the report. Adding a step is a new
 * function and one line in INGEST_STEPS.
 */
import type { PositionReport } from '../model/report.js';
import type { Location } from '../model/location.js';
import type { AlertInput } from '../alerts/alerts.service.js';
import { ALERT_NAME_BY_ALARM, CRITICAL_ALARMS } from '../alerts/alarm-names.js';

export interface Draft {
  report: PositionReport;
  protocol: string;
  receivedAt: Date;
  /** receivedAt as ISO 8601, formatted once per batch */
  serverTime: string;
  fixTime: Date;
  location?: Location;
  alerts: AlertInput[];
  drop?: string;
}

type Step = (d: Draft) => void;

const FUTURE_LIMIT_MS = 25 * 3600_000;

/** Fix time: the device's, or the receive time when it sent none; a fix over 25 h ahead is refused. */
const fixTime: Step = (d) => {
  d.fixTime = d.report.fixTime ?? d.receivedAt;
  if (Number.isNaN(d.fixTime.getTime())) d.drop = 'invalid fix time';
  else if (d.fixTime.getTime() > d.receivedAt.getTime() + FUTURE_LIMIT_MS) d.drop = 'fix time more than 25 h ahead';
};

/** Coordinates must be possible; (0, 0) with an invalid fix is a tracker without a fix yet. */
const sanity: Step = (d) => {
  const l = d.report.location;
  if (!l) return;
  if (!Number.isFinite(l.latitudeDeg) || !Number.isFinite(l.longitudeDeg) || Math.abs(l.latitudeDeg) > 90 || Math.abs(l.longitudeDeg) > 180) {
    d.report = { ...d.report, location: undefined };
  } else if (!l.valid && l.latitudeDeg === 0 && l.longitudeDeg === 0) {
    d.report = { ...d.report, location: undefined };
  }
};

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The REST location shape (CONTRACT.md "Location fields"), units already normalised by decoders. */
const toLocation: Step = (d) => {
  const l = d.report.location;
  if (!l) return;
  const a = d.report.attributes;
  const odometerM = num(a.odometer) ?? num(a.totalDistance);
  const alertNames = d.report.alarms.map((x) => ALERT_NAME_BY_ALARM[x]);
  const loc: Location = {
    dateTime: d.fixTime.toISOString(),
    latitude: l.latitudeDeg,
    longitude: l.longitudeDeg,
    speed: l.speedKmh !== undefined ? Math.max(0, l.speedKmh) : null,
    course: l.courseDeg ?? null,
    altitude: l.altitudeM ?? null,
    accuracy: l.accuracyM ?? null,
    satellites: l.satellites ?? num(a.sat) ?? null,
    valid: l.valid,
    battery: num(a.batteryLevel) ?? null,
    fuel: num(a.fuel) ?? num(a.fuel1) ?? null,
    temperature: num(a.temp1) ?? num(a.deviceTemp) ?? null,
    temperature2: num(a.temp2) ?? null,
    rpm: num(a.rpm) ?? null,
    milleage: odometerM !== undefined ? odometerM / 1000 : null,
    alerts: alertNames,
    hasCriticalAlert: d.report.alarms.some((x) => CRITICAL_ALARMS.has(x)),
    attributes: a,
    serverTime: d.serverTime,
    protocol: d.protocol,
  };
  if (typeof a.ignition === 'boolean') loc.inputs = [a.ignition];
  d.location = loc;
};

/** Every alarm becomes an alert, at the fix's place and time. */
const toAlerts: Step = (d) => {
  const l = d.report.location;
  for (const alarm of new Set(d.report.alarms)) {
    d.alerts.push({
      dateTime: d.fixTime.toISOString(),
      latitude: l?.latitudeDeg ?? null,
      longitude: l?.longitudeDeg ?? null,
      alertName: ALERT_NAME_BY_ALARM[alarm],
      text: `${ALERT_NAME_BY_ALARM[alarm]} reported by the tracker (${d.protocol})`,
      alerts: [ALERT_NAME_BY_ALARM[alarm]],
    });
  }
};

export const INGEST_STEPS: readonly Step[] = [fixTime, sanity, toLocation, toAlerts];

export function runSteps(report: PositionReport, protocol: string, receivedAt: Date, serverTime = receivedAt.toISOString()): Draft {
  const d: Draft = { report, protocol, receivedAt, serverTime, fixTime: receivedAt, alerts: [] };
  for (const step of INGEST_STEPS) {
    step(d);
    if (d.drop) break;
  }
  return d;
}
