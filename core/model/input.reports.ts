/**
 * What a client sends in the REST shapes (docs/contract.md §2 "Location fields", "Alert fields"),
 * already validated by core/ingest/input.schemas.ts, as the ingest's one report type. REST and MQTT
 * `devices/{id}/locations` and `/alerts` convert here, where the message arrives; INGEST_STEPS then
 * check, store and raise it as they do a tracker's report.
 */
import type { Location, LocationInput } from './location.js';
import type { AlertInput } from './alert.js';
import type { Report } from './report.js';

const known = (v: number | null | undefined): number | undefined => v ?? undefined;

/** A location: its position for the checks, every field with a value stored as given. */
export function locationReport(input: LocationInput): Report {
  const given = {} as Record<string, unknown>;
  for (const k in input) {
    const v = (input as Record<string, unknown>)[k];
    if (v !== null && v !== undefined) given[k] = v;
  }
  return {
    fixTime: new Date(input.dateTime),
    location: {
      latitudeDeg: input.latitude,
      longitudeDeg: input.longitude,
      // a client that says nothing of the fix reports a valid one
      valid: input.valid ?? true,
      speedKmh: known(input.speed),
      courseDeg: known(input.course),
      altitudeM: known(input.altitude),
      accuracyM: known(input.accuracy),
      satellites: known(input.satellites),
    },
    alarms: [],
    attributes: {},
    given: given as unknown as Location,
  };
}

/** An alert raised by name, with no position of its own to store. */
export function alertReport(input: AlertInput): Report {
  return { alarms: [], attributes: {}, raised: [input] };
}
