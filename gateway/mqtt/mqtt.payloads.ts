/**
 * The JSON a device publishes to `devices/{id}/locations` and `devices/{id}/alerts`: the REST
 * bodies' `location` and `alert` objects (docs/contract.md §2 "Location fields", "Alert fields"), one
 * object or an array, validated by the same schemas as the REST bodies (core/ingest/input.schemas.ts).
 */
import { z } from 'zod';
import type { LocationInput } from '../../core/model/location.js';
import type { AlertInput } from '../../core/alerts/alerts.service.js';
import { alertInput, locationInput, MAX_LOCATIONS_PER_REQUEST } from '../../core/ingest/input.schemas.js';
import { jsonInputProblem } from '../../core/ingest/json.limits.js';

/** As many locations per message as REST takes per request. */
export const MAX_LOCATIONS_PER_MESSAGE = MAX_LOCATIONS_PER_REQUEST;
export const MAX_ALERTS_PER_MESSAGE = 100;

const locationArraySchema = z.array(locationInput).min(1).max(MAX_LOCATIONS_PER_MESSAGE);
const alertArraySchema = z.array(alertInput).min(1).max(MAX_ALERTS_PER_MESSAGE);
const oneLocation = locationInput.transform((l) => [l]);
const oneAlert = alertInput.transform((a) => [a]);

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

/**
 * The payload as JSON, or why it is not JSON or cannot be taken: nested too deep, or a string
 * holding NUL (the same bounds as REST bodies, core/ingest/json.limits.ts).
 */
export function parseJson(payload: Buffer): Parsed<unknown> {
  let value: unknown;
  try {
    value = JSON.parse(payload.toString('utf8'));
  } catch (e) {
    return { ok: false, reason: `not JSON (${(e as Error).message})` };
  }
  const problem = jsonInputProblem(value);
  if (problem) return { ok: false, reason: problem.field ? `${problem.field}: ${problem.message}` : problem.message };
  return { ok: true, value };
}

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  const path = issue.path.join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}

export function parseLocations(payload: Buffer): Parsed<LocationInput[]> {
  const json = parseJson(payload);
  if (!json.ok) return json;
  const r = Array.isArray(json.value) ? locationArraySchema.safeParse(json.value) : oneLocation.safeParse(json.value);
  return r.success ? { ok: true, value: r.data } : { ok: false, reason: firstIssue(r.error) };
}

export function parseAlerts(payload: Buffer): Parsed<AlertInput[]> {
  const json = parseJson(payload);
  if (!json.ok) return json;
  const r = Array.isArray(json.value) ? alertArraySchema.safeParse(json.value) : oneAlert.safeParse(json.value);
  return r.success ? { ok: true, value: r.data } : { ok: false, reason: firstIssue(r.error) };
}

/** A short, printable excerpt of a payload for the log. */
export function excerpt(payload: Buffer, max = 120): string {
  const text = payload
    .subarray(0, max)
    .toString('utf8')
    .replace(/[\u0000-\u001f\u007f]/g, '.');
  return payload.length > max ? `${text}…` : text;
}

/** As many answers per message as alerts. */
export const MAX_COMMAND_RESULTS_PER_MESSAGE = 100;
const commandResult = z.object({
  id: z.number().int().positive(),
  result: z.string().max(65_536),
});
const commandResultArraySchema = z.array(commandResult).min(1).max(MAX_COMMAND_RESULTS_PER_MESSAGE);

/** `devices/{id}/commandResults`: `{id, result}` or an array of them (docs/contract.md §3). */
export function parseCommandResults(payload: Buffer): Parsed<{ id: number; result: string }[]> {
  const json = parseJson(payload);
  if (!json.ok) return json;
  const r = Array.isArray(json.value)
    ? commandResultArraySchema.safeParse(json.value)
    : commandResult.transform((x) => [x]).safeParse(json.value);
  return r.success ? { ok: true, value: r.data } : { ok: false, reason: firstIssue(r.error) };
}
