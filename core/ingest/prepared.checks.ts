/**
 * The checks on rows that reach the core already prepared by a gateway process (gateway/ipc/
 * `store`, docs/scaling.md). Holding the link's secret is no licence to write anything, so each
 * location and alert is held to what the ingest steps make of any input: the stored location
 * shape, each field of its type, the shared checks of location.checks.ts, flat attributes within
 * MAX_ATTRIBUTES_JSON. What fails is not stored, and said why.
 * No zod here: api/ extends zod before it builds its schemas, and the link loads this module earlier.
 */
import { fixTimeProblem, positionProblem } from './location.checks.js';
import { fixTimeDropped } from './ingest.steps.js';
import { isRealDateTime } from './date-time.checks.js';
import { jsonInputProblem, jsonLength, MAX_ATTRIBUTES_JSON } from './json.limits.js';
import type { AlertInput } from '../model/alert.js';
import type { Location } from '../model/location.js';
import { isoUtc } from '../model/time.js';

type Kind =
  | 'time'
  | 'coordinate'
  | 'number'
  | 'boolean'
  | 'strings'
  | 'booleans'
  | 'attributes'
  | 'accessories'
  | 'text';

/** every field of the stored location shape (model/location.ts Location), by what its value must be */
const FIELDS: Record<Exclude<keyof Location, 'totalDistance'>, Kind> = {
  dateTime: 'time',
  serverTime: 'time',
  latitude: 'coordinate',
  longitude: 'coordinate',
  speed: 'number',
  course: 'number',
  battery: 'number',
  fuel: 'number',
  fuel2: 'number',
  temperature: 'number',
  temperature2: 'number',
  sensorTime1: 'number',
  sensorTime2: 'number',
  sensorTime3: 'number',
  sensorTime4: 'number',
  inactiveSeconds: 'number',
  rpm: 'number',
  milleage: 'number',
  altitude: 'number',
  accuracy: 'number',
  satellites: 'number',
  warningTexts: 'strings',
  alertTexts: 'strings',
  alerts: 'strings',
  warnings: 'strings',
  hasCriticalAlert: 'boolean',
  valid: 'boolean',
  inputs: 'booleans',
  outputs: 'booleans',
  attributes: 'attributes',
  accessoriesAttributes: 'accessories',
  protocol: 'text',
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Why a value of `kind` is not one (a message to follow the field's name), or undefined. */
function kindProblem(kind: Kind, v: unknown): string | undefined {
  switch (kind) {
    case 'time':
      // checked against the row's times below
      return typeof v === 'string' ? undefined : 'must be an ISO 8601 date-time';
    case 'coordinate':
    case 'number':
      // JSON has no NaN or Infinity: a number parsed is finite
      return typeof v === 'number' ? undefined : 'must be a number';
    case 'boolean':
      return typeof v === 'boolean' ? undefined : 'must be true or false';
    case 'text':
      return typeof v === 'string' ? undefined : 'must be a string';
    case 'strings':
      return Array.isArray(v) && v.every((s) => typeof s === 'string') ? undefined : 'must be an array of strings';
    case 'booleans':
      return Array.isArray(v) && v.every((b) => typeof b === 'boolean')
        ? undefined
        : 'must be an array of true and false';
    case 'attributes':
      // as the attributes step leaves a tracker's: strings, numbers and booleans
      if (!isObject(v)) return 'must be an object of strings, numbers and booleans';
      for (const k in v) {
        const a = v[k];
        if (typeof a !== 'string' && typeof a !== 'number' && typeof a !== 'boolean')
          return 'must be an object of strings, numbers and booleans';
      }
      return undefined;
    case 'accessories':
      if (!Array.isArray(v) || !v.every(isObject)) return 'must be an array of objects';
      // free-form, as a client's: nested at most MAX_JSON_DEPTH
      return jsonInputProblem(v)?.message;
  }
}

export interface PreparedRow {
  /** the row's fix time (epoch ms), its date_time */
  fixMs: number;
  /** the request's receive time (epoch ms), its server_time */
  serverTimeMs: number;
  protocol: string;
  /** the core's clock */
  nowMs: number;
}

const NUL_MESSAGE = 'holds a NUL character (\\u0000), which cannot be stored';

/** `text` is the instant `ms` as an ISO 8601 date-time (the steps write isoUtc's: compared first, without a parse) */
const isTime = (text: string, ms: number): boolean =>
  text === isoUtc(ms) || (isRealDateTime(text) && Date.parse(text) === ms);

/**
 * The location the stored JSON `json` of a position prepared elsewhere holds, parsed once (the row
 * keeps it), when it may be stored as it is; else why not (a message naming the field).
 */
export function preparedLocation(json: string, row: PreparedRow): Location | string {
  const late = fixTimeProblem(row.fixMs, row.nowMs);
  // as a tracker's fix time is logged (an edge's clock may differ from the core's)
  if (late) return fixTimeDropped(row.fixMs, late.message);
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return 'the location is not JSON';
  }
  if (!isObject(value)) return 'the location is not a JSON object';
  // JSON text holds NUL only escaped (a false alarm needs an escaped backslash before "u0000": refused too)
  if (json.includes('\\u0000')) return `the location ${NUL_MESSAGE}`;
  for (const key in value) {
    // totalDistance is the core's to compute (core/locations/distance.ts): a gateway's is refused
    // own fields only: `__proto__` (an own key of what JSON.parse makes) is no field either
    const kind = Object.hasOwn(FIELDS, key) ? FIELDS[key as keyof typeof FIELDS] : undefined;
    if (kind === undefined) return `${key} is not a field of a location`;
    const problem = kindProblem(kind, value[key]);
    if (problem) return `${key} ${problem}`;
  }
  const l = value as Partial<Location>;
  if (l.latitude === undefined || l.longitude === undefined || l.dateTime === undefined)
    return 'dateTime, latitude and longitude are required';
  // the row is stored, ordered and answered by its fix time; the JSON shows it
  if (!isTime(l.dateTime, row.fixMs)) return `dateTime ${l.dateTime} is not the row's fix time (${isoUtc(row.fixMs)})`;
  if (l.serverTime !== undefined && !isTime(l.serverTime, row.serverTimeMs))
    return `serverTime ${l.serverTime} is not the time the positions were received (${isoUtc(row.serverTimeMs)})`;
  // the whole text within the bound is the attributes within it (counted only for a longer one)
  if (json.length > MAX_ATTRIBUTES_JSON) {
    for (const key of ['attributes', 'accessoriesAttributes'] as const) {
      if (l[key] !== undefined && jsonLength(l[key], MAX_ATTRIBUTES_JSON) > MAX_ATTRIBUTES_JSON)
        return `${key} must be at most ${MAX_ATTRIBUTES_JSON} characters as JSON`;
    }
  }
  if (l.protocol !== undefined && l.protocol !== row.protocol)
    return `protocol ${l.protocol} is not the request's (${row.protocol})`;
  const position = positionProblem({ latitude: l.latitude, longitude: l.longitude, speed: l.speed, course: l.course });
  return position ? `${position.field} ${position.message}` : (l as Location);
}

/** the alert input's bounds (input.schemas.ts alertInput) */
const ALERT_NAME_MAX = 64;
const ALERT_TEXT_MAX = 1000;
const ALERT_ALERTS_MAX = 20;

const optional = (v: unknown, ok: (v: unknown) => boolean): boolean => v === undefined || v === null || ok(v);
const within =
  (limit: number) =>
  (v: unknown): boolean =>
    typeof v === 'number' && Number.isFinite(v) && Math.abs(v) <= limit;

/** Why `a` is not an alert a client may raise (input.schemas.ts alertInput), or undefined. */
function alertShapeProblem(a: Record<string, unknown>): string | undefined {
  const name = a.alertName;
  if (typeof name !== 'string' || name.trim().length === 0 || name.trim().length > ALERT_NAME_MAX)
    return `alertName must be 1 to ${ALERT_NAME_MAX} characters`;
  if (!optional(a.dateTime, (v) => typeof v === 'string' && isRealDateTime(v)))
    return 'dateTime must be an ISO 8601 date-time';
  if (!optional(a.latitude, within(90))) return 'latitude must be a number from -90 to 90';
  if (!optional(a.longitude, within(180))) return 'longitude must be a number from -180 to 180';
  if ((a.latitude == null) !== (a.longitude == null)) return 'latitude and longitude go together';
  if (!optional(a.text, (v) => typeof v === 'string' && v.length <= ALERT_TEXT_MAX))
    return `text must be a string of at most ${ALERT_TEXT_MAX} characters`;
  const alerts = a.alerts;
  if (
    alerts !== undefined &&
    !(
      Array.isArray(alerts) &&
      alerts.length <= ALERT_ALERTS_MAX &&
      alerts.every((x) => typeof x === 'string' && x.length <= ALERT_NAME_MAX)
    )
  )
    return `alerts must be at most ${ALERT_ALERTS_MAX} names`;
  return undefined;
}

/**
 * The alert prepared elsewhere as the core records it (the alert input's fields only), or why it
 * may not be: what a client's alert may be, dated (when it is) within the fix-time checks.
 */
export function preparedAlert(a: unknown, nowMs: number): { alert: AlertInput } | { problem: string } {
  if (!isObject(a)) return { problem: 'an alert is not an object' };
  const shape = alertShapeProblem(a);
  const name = typeof a.alertName === 'string' ? a.alertName.trim() : '';
  if (shape) return { problem: `alert ${name}: ${shape}` };
  const late = typeof a.dateTime === 'string' ? fixTimeProblem(Date.parse(a.dateTime), nowMs) : undefined;
  if (late) return { problem: `alert ${name}: dateTime ${late.message}` };
  const alert: AlertInput = { alertName: name };
  if (typeof a.dateTime === 'string') alert.dateTime = a.dateTime;
  if (typeof a.latitude === 'number' && typeof a.longitude === 'number')
    [alert.latitude, alert.longitude] = [a.latitude, a.longitude];
  if (typeof a.text === 'string') alert.text = a.text;
  if (Array.isArray(a.alerts)) alert.alerts = a.alerts as string[];
  return { alert };
}

/** what a receive time must be: a time after 2000 and not ahead of the core's clock by more than a fix may be */
export function receivedTimeProblem(serverTimeMs: number, nowMs: number): string | undefined {
  if (!Number.isSafeInteger(serverTimeMs)) return 'serverTime must be a time in epoch ms';
  const problem = fixTimeProblem(serverTimeMs, nowMs);
  return problem && `serverTime ${problem.message}`;
}
