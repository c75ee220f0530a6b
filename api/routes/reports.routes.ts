/** Trips, stops and summary reports (*ext*, docs/rest.md "Trips, stops and summary"), and their settings. */
import type { Context } from 'koa';
import { addRoute, FileAnswer, type RouteTable } from '../route.js';
import {
  reportQuery,
  reportSettingsChange,
  reportSettingsResponse,
  stopsResponse,
  summaryResponse,
  tripsResponse,
} from '../schemas/reports.schemas.js';
import { csvField } from '../../core/export/export.text.js';
import type { ReportQuery, ReportsService } from '../../core/reports/reports.service.js';
import type { Principal } from '../../core/model/user.js';

const CSV_TYPE = 'text/csv; charset=utf-8';

/** each report's CSV columns: its fields, in the contract's order (docs/contract.md §5) */
const COLUMNS = {
  trips: [
    'deviceId',
    'startTime',
    'endTime',
    'startLatitude',
    'startLongitude',
    'endLatitude',
    'endLongitude',
    'distance',
    'duration',
    'maxSpeed',
    'averageSpeed',
  ],
  stops: ['deviceId', 'startTime', 'endTime', 'latitude', 'longitude', 'duration'],
  summary: ['deviceId', 'distance', 'maxSpeed', 'averageSpeed', 'drivingTime', 'stoppedTime', 'engineHours'],
} as const;

type Kind = keyof typeof COLUMNS;

/** RFC 4180: a header row, CRLF line ends; an absent value is an empty field. */
function csvText(kind: Kind, rows: readonly object[]): string {
  const columns = COLUMNS[kind];
  const line = (values: readonly unknown[]) =>
    `${values.map((v) => (v === undefined || v === null ? '' : csvField(String(v)))).join(',')}\r\n`;
  let out = line(columns);
  for (const r of rows) out += line(columns.map((c) => (r as Record<string, unknown>)[c]));
  return out;
}

/** whether the client asked for CSV rather than JSON */
const wantsCsv = (ctx: Context): boolean => ctx.accepts('application/json', 'text/csv') === 'text/csv';

async function* once(text: string): AsyncGenerator<string> {
  yield text;
}

export function reportRoutes(api: RouteTable, reports: ReportsService): void {
  const report = (
    kind: Kind,
    summary: string,
    description: string,
    schema: typeof tripsResponse | typeof stopsResponse | typeof summaryResponse,
    compute: (p: Principal, q: ReportQuery) => Promise<object[]>,
  ) =>
    addRoute(api, {
      method: 'get',
      path: `/api/reports/${kind}`,
      tags: ['Reports'],
      summary,
      description: `${description} With \`Accept: text/csv\` the same rows as CSV (RFC 4180, a header row naming the fields above, CRLF; an absent value is an empty field). Detection is the account's (GET /api/reports/settings); days are computed once and cached, so a month answers in well under a second (docs/rest.md "Trips, stops and summary").`,
      query: reportQuery,
      responses: {
        200: {
          description: 'The report: JSON, or CSV with `Accept: text/csv` (`Content-Disposition: attachment`).',
          schema,
          files: ['text/csv'],
        },
        404: { description: 'DEVICE_NOT_FOUND or GROUP_NOT_FOUND: not one the caller may see.' },
      },
      handler: async (ctx, { principal, query }) => {
        const rows = await compute(principal, query);
        if (wantsCsv(ctx)) {
          const name = `${kind}_${(query.deviceId ?? query.groupId ?? '').replace(/[^A-Za-z0-9._-]/g, '_')}.csv`;
          return new FileAnswer(CSV_TYPE, name, once(csvText(kind, rows)));
        }
        return { body: { success: true, [kind]: rows } };
      },
    });

  report(
    'trips',
    'ext: trips of a device or a group',
    "Every trip that overlaps [from, to], whole (one that began before `from` is shown from its start), in time order per device: start and end time (the account's time zone) and place, distance (km), duration (s), maximum and average speed (km/h).",
    tripsResponse,
    (p, q) => reports.trips(p, q),
  );
  report(
    'stops',
    'ext: stops of a device or a group',
    'Every stop that overlaps [from, to], whole, in time order per device: start and end time, place, duration (s). A stop ends when the next trip begins; the last one ends at the last fix.',
    stopsResponse,
    (p, q) => reports.stops(p, q),
  );
  report(
    'summary',
    'ext: distance, driving and stopped time per device',
    "One entry per device: the trips' distance, maximum and average speed and driving time, the stops' time (the same trips and stops as the trips and stops reports), and engine hours (ignition on within [from, to]) when the device reports ignition.",
    summaryResponse,
    (p, q) => reports.summary(p, q),
  );

  addRoute(api, {
    method: 'get',
    path: '/api/reports/settings',
    tags: ['Reports'],
    summary: "ext: the account's trip and stop detection",
    responses: { 200: { description: 'The settings.', schema: reportSettingsResponse } },
    handler: async (_ctx, { principal }) => ({
      body: { success: true, settings: await reports.settings(principal) },
    }),
  });
  addRoute(api, {
    method: 'put',
    path: '/api/reports/settings',
    tags: ['Reports'],
    summary: "ext: change the account's trip and stop detection (admin)",
    description: 'The fields given change; the others stay. Cached days are computed again with the new settings.',
    body: reportSettingsChange,
    responses: {
      200: { description: 'The settings now.', schema: reportSettingsResponse },
      403: { description: 'Not an admin.' },
    },
    handler: async (_ctx, { principal, body }) => ({
      body: { success: true, settings: await reports.setSettings(principal, body) },
    }),
  });
}
