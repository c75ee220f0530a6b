/** The fleet at once (*ext*): every device's status and last location, and devices imported in bulk. */
import type { Context } from 'koa';
import { addRoute, JsonText, type RouteTable } from '../route.js';
import { z } from '../schemas/zod.js';
import {
  importResponse,
  importRowSchema,
  lastLocationsQuery,
  lastLocationsResponse,
} from '../schemas/fleet.schemas.js';
import { checkInputBounds, isJsonRequest, readTextBody } from '../body.js';
import { CsvError, parseCsv } from '../csv.js';
import { DomainError } from '../../core/errors.js';
import type { FleetService } from '../../core/devices/fleet.service.js';
import type { DevicesService, DeviceInput } from '../../core/devices/devices.service.js';
import type { ImportRow, Refusal } from '../../core/devices/devices.import.js';

/** at most this many rows per import (413 beyond), and this many bytes */
export const IMPORT_MAX_ROWS = 10_000;
export const IMPORT_MAX_BYTES = 5 * 1024 * 1024;

/** CSV columns an import takes: the device's fields; lists (groups, alertEmails, alertPhones) separated by `;`, tags as `key=value;...` */
const CSV_COLUMNS = new Set([
  'id',
  'name',
  'description',
  'min',
  'expires',
  'dailyEmailLimit',
  'dailySmsLimit',
  'model',
  'groups',
  'alertEmails',
  'alertPhones',
  'tags',
]);
const LIST_COLUMNS = new Set(['groups', 'alertEmails', 'alertPhones']);
const NUMBER_COLUMNS = new Set(['dailyEmailLimit', 'dailySmsLimit']);

export function fleetRoutes(api: RouteTable, s: { fleet: FleetService; devices: DevicesService }): void {
  addRoute(api, {
    method: 'get',
    path: '/api/lastLocations',
    tags: ['Devices'],
    summary: 'ext: every device with its status and last location',
    description:
      "Every device the caller may see (a group-restricted user: its group's), ordered by id, or those of `groupId`, each with `status` (`online` with its `transport`, `offline` with `lastSeen`, or `expired`) and its last location (null while it has none). One query, whatever the fleet's size.",
    query: lastLocationsQuery,
    responses: {
      200: { description: 'The fleet.', schema: lastLocationsResponse },
      404: { description: 'GROUP_NOT_FOUND: no such group the caller may see.' },
    },
    handler: async (_ctx, { principal, query }) => ({
      body: { success: true, lastLocations: new JsonText(await s.fleet.lastLocationsJson(principal, query.groupId)) },
    }),
  });
  addRoute(api, {
    method: 'post',
    path: '/api/devices/import',
    tags: ['Devices'],
    summary: 'ext: create many devices (admin)',
    description: `A JSON array of devices as POST /api/devices takes them (plus \`groups\`: ids of the account's groups), or CSV (\`Content-Type: text/csv\`) with a header row naming the columns (${[...CSV_COLUMNS].join(', ')}; lists separated by \`;\`, tags as \`key=value;key=value\`, an empty cell is absent). At most ${IMPORT_MAX_ROWS} rows and ${IMPORT_MAX_BYTES} bytes (413 beyond). The rows accepted are created in one transaction; each refused row says why (\`VALIDATION_FAILED\`, \`DEVICE_EXISTS\` taken or earlier in the file, \`GROUP_NOT_FOUND\`, \`NO_LICENSE_AVAILABLE\`: active rows beyond the free licences, in file order) and the others are created all the same. A body that is not an array or CSV with a header: 400.`,
    bodyDoc: {
      content: {
        'application/json': { schema: z.array(importRowSchema) },
        'text/csv': { schema: z.string().openapi({ example: 'id,name,groups\n356307042441013,Truck 1,g1;g2\n' }) },
      },
    },
    responses: {
      200: { description: 'What was created and what refused.', schema: importResponse },
      403: { description: 'Not an admin.' },
    },
    handler: async (ctx, { principal }) => {
      const raw = await readImportBody(ctx);
      const rows: ImportRow<DeviceInput>[] = [];
      const refused: Refusal[] = [];
      raw.forEach((value, i) => {
        const row = i + 1;
        if (value instanceof MalformedRow) {
          refused.push({ row, id: value.id, code: 'VALIDATION_FAILED', error: value.error });
          return;
        }
        const parsed = importRowSchema.safeParse(value);
        const id = typeof (value as { id?: unknown })?.id === 'string' ? String((value as { id: string }).id) : null;
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          refused.push({
            row,
            id,
            code: 'VALIDATION_FAILED',
            error: `${issue.path.join('.') || 'row'}: ${issue.message}`,
          });
          return;
        }
        const { groups, ...input } = parsed.data;
        rows.push({ row, input, groups: groups ?? [] });
      });
      const out = await s.devices.importMany(principal, rows, refused);
      return { body: { success: true, created: out.created, refused: out.refused } };
    },
  });
}

/** A CSV record that cannot be read as a row (another number of fields than the header). */
class MalformedRow {
  constructor(
    readonly id: string | null,
    readonly error: string,
  ) {}
}

/** The rows of the body: a JSON array, or CSV records as objects by the header's names. */
async function readImportBody(ctx: Context): Promise<unknown[]> {
  const type = ctx.get('content-type').split(';')[0].trim().toLowerCase();
  const csv = type === 'text/csv';
  if (!csv && !isJsonRequest(ctx))
    throw new DomainError('UNSUPPORTED_MEDIA_TYPE', 'Send the devices as JSON (application/json) or CSV (text/csv).');
  const text = await readTextBody(ctx, IMPORT_MAX_BYTES);
  const rows = csv ? csvRows(text) : jsonRows(text);
  if (rows.length === 0) throw invalid('the body holds no device');
  if (rows.length > IMPORT_MAX_ROWS)
    throw new DomainError(
      'PAYLOAD_TOO_LARGE',
      `At most ${IMPORT_MAX_ROWS} devices per import; this one has ${rows.length}.`,
    );
  return rows;
}

const invalid = (message: string) =>
  new DomainError('VALIDATION_FAILED', `body: ${message}`, { field: 'body', issues: [{ field: 'body', message }] });

function jsonRows(text: string): unknown[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new DomainError('INVALID_JSON', `The request body is not valid JSON (${(e as Error).message}).`);
  }
  if (!Array.isArray(value)) throw invalid('expected a JSON array of devices');
  return checkInputBounds(value, 'body');
}

function csvRows(text: string): unknown[] {
  let records: string[][];
  try {
    records = parseCsv(text);
  } catch (e) {
    if (e instanceof CsvError) throw invalid(`not CSV (${e.message})`);
    throw e;
  }
  checkInputBounds(records, 'body');
  const header = records.shift()?.map((h) => h.trim());
  if (!header?.includes('id')) throw invalid('the CSV has no header row with an "id" column');
  const unknown = header.find((h) => !CSV_COLUMNS.has(h));
  if (unknown !== undefined) throw invalid(`unknown CSV column "${unknown}" (known: ${[...CSV_COLUMNS].join(', ')})`);
  return records.map((fields) => {
    if (fields.length !== header.length)
      return new MalformedRow(
        fields[header.indexOf('id')]?.trim() || null,
        `row: it has ${fields.length} fields, the header ${header.length}`,
      );
    const row: Record<string, unknown> = {};
    header.forEach((name, i) => {
      const cell = fields[i].trim();
      if (cell === '') return;
      if (LIST_COLUMNS.has(name)) row[name] = splitList(cell);
      else if (NUMBER_COLUMNS.has(name)) row[name] = /^\d+$/.test(cell) ? Number(cell) : cell;
      else if (name === 'tags') row[name] = Object.fromEntries(splitList(cell).map(tagPair));
      else row[name] = cell;
    });
    return row;
  });
}

const splitList = (cell: string) =>
  cell
    .split(';')
    .map((x) => x.trim())
    .filter((x) => x !== '');

function tagPair(item: string): [string, string] {
  const at = item.indexOf('=');
  return at < 0 ? [item, ''] : [item.slice(0, at).trim(), item.slice(at + 1).trim()];
}
