/**
 * The JSON a device publishes to `devices/{id}/locations` and `devices/{id}/alerts`: the REST
 * bodies' `location` and `alert` objects (CONTRACT.md §2 "Location fields", "Alert fields"), one
 * object or an array. The same bounds as the REST schemas (api/ is off-limits to the gateway, so
 * they are restated here); unknown fields are dropped, as REST drops them.
 */
import { z } from 'zod';
import type { Location } from '../../core/model/location.js';
import type { AlertInput } from '../../core/alerts/alerts.service.js';

/** Any ISO 8601 date-time with a zone (`Z` or `±hh:mm`), e.g. 2026-03-01T10:00:00Z. */
const isoDateTime = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i, 'must be an ISO 8601 date-time with a zone')
  .refine((s) => !Number.isNaN(new Date(s).getTime()), 'is not a real date');

const num = z.number().finite().nullable().optional();
const strings = z.array(z.string().max(500)).max(100).optional();

const locationSchema = z.object({
  dateTime: isoDateTime,
  latitude: z.number().min(-90).max(90),
  longitude: z.number().min(-180).max(180),
  speed: z.number().min(0).max(2000).nullable().optional(),
  course: z.number().min(0).max(360).nullable().optional(),
  battery: z.number().min(0).max(100).nullable().optional(),
  fuel: num, fuel2: num, temperature: num, temperature2: num,
  sensorTime1: num, sensorTime2: num, sensorTime3: num, sensorTime4: num,
  inactiveSeconds: num, rpm: num, milleage: num,
  warningTexts: strings, alertTexts: strings, alerts: strings, warnings: strings,
  hasCriticalAlert: z.boolean().nullable().optional(),
  attributes: z.record(z.string(), z.unknown()).optional(),
  accessoriesAttributes: z.array(z.record(z.string(), z.unknown())).max(100).optional(),
  inputs: z.array(z.boolean()).max(64).optional(),
  outputs: z.array(z.boolean()).max(64).optional(),
  altitude: num,
  accuracy: num,
  satellites: z.number().int().min(0).max(255).nullable().optional(),
  valid: z.boolean().nullable().optional(),
});

const alertSchema = z.object({
  dateTime: isoDateTime.optional(),
  latitude: z.number().min(-90).max(90).nullable().optional(),
  longitude: z.number().min(-180).max(180).nullable().optional(),
  text: z.string().max(1000).nullable().optional(),
  alertName: z.string().trim().min(1).max(64),
  alerts: z.array(z.string().max(64)).max(20).optional(),
});

/** As many locations per message as REST takes per request. */
export const MAX_LOCATIONS_PER_MESSAGE = 5000;
export const MAX_ALERTS_PER_MESSAGE = 100;

const locationArraySchema = z.array(locationSchema).min(1).max(MAX_LOCATIONS_PER_MESSAGE);
const alertArraySchema = z.array(alertSchema).min(1).max(MAX_ALERTS_PER_MESSAGE);
const oneLocation = locationSchema.transform((l) => [l]);
const oneAlert = alertSchema.transform((a) => [a]);

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

/** The payload as JSON, or why it is not JSON. */
export function parseJson(payload: Buffer): Parsed<unknown> {
  try {
    return { ok: true, value: JSON.parse(payload.toString('utf8')) };
  } catch (e) {
    return { ok: false, reason: `not JSON (${(e as Error).message})` };
  }
}

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  const path = issue.path.join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}

export function parseLocations(payload: Buffer): Parsed<Location[]> {
  const json = parseJson(payload);
  if (!json.ok) return json;
  const r = Array.isArray(json.value) ? locationArraySchema.safeParse(json.value) : oneLocation.safeParse(json.value);
  return r.success ? { ok: true, value: r.data as Location[] } : { ok: false, reason: firstIssue(r.error) };
}

export function parseAlerts(payload: Buffer): Parsed<AlertInput[]> {
  const json = parseJson(payload);
  if (!json.ok) return json;
  const r = Array.isArray(json.value) ? alertArraySchema.safeParse(json.value) : oneAlert.safeParse(json.value);
  return r.success ? { ok: true, value: r.data } : { ok: false, reason: firstIssue(r.error) };
}

/** A short, printable excerpt of a payload for the log. */
export function excerpt(payload: Buffer, max = 120): string {
  const text = payload.subarray(0, max).toString('utf8').replace(/[\u0000-\u001f\u007f]/g, '.');
  return payload.length > max ? `${text}…` : text;
}
