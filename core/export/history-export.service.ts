/**
 * A device's history as a file (GET /api/devices/{deviceId}/locations/export): CSV, GPX, GeoJSON
 * or KML, written while it is read. The history is read in keyset pages of EXPORT_PAGE_ROWS fixes
 * (fix time is the key), each a short query holding no connection, snapshot or lock between pages,
 * and the next page is read only when the reader of the file has taken the text of the one before
 * (the caller pulls the chunks): memory stays at about a page whatever the range, ten million
 * fixes or ten. Who may export is who may read the history (the range endpoint): the device
 * visible to the caller, 404 otherwise; the same from/to checks.
 */
import type { Db } from '../db/db.js';
import type { Principal } from '../model/user.js';
import type { Location } from '../model/location.js';
import { visibleDevice } from '../access/access.js';
import { rangeBounds } from '../paging.js';
import * as locations from '../locations/locations.repository.js';
import * as accounts from '../accounts/accounts.repository.js';
import { FORMAT_WRITERS, type ExportFile, type ExportFormat, type Fix, type FormatWriter } from './export.formats.js';
import { localTimeWriter } from './local-time.js';

/**
 * Fixes per read. Smaller pages leave less for the garbage collector to promote (a 1,000,000-row
 * export grew the process by ~9 MiB at 250, ~40 MiB at 1,000) and cost nothing measurable in
 * speed: a page is one indexed read.
 */
export const EXPORT_PAGE_ROWS = 250;

export interface ExportRequest {
  from: string;
  to: string;
  format: ExportFormat;
}

export interface ExportAnswer {
  contentType: string;
  /** ASCII letters, digits, `.`, `-` and `_` only: safe in a Content-Disposition header as it is */
  fileName: string;
  /** the file's text, in order; the next page is read when the next chunk is asked for */
  chunks: AsyncIterable<string>;
}

export interface HistoryExportService {
  /**
   * Checks access and the range (404 DEVICE_NOT_FOUND, 400 VALIDATION_FAILED) before anything is
   * read, so a refusal is an ordinary error answer; the file itself is read as `chunks` is.
   */
  open(p: Principal, deviceId: string, r: ExportRequest): Promise<ExportAnswer>;
}

export function createHistoryExport(deps: { db: Db; pageRows?: number }): HistoryExportService {
  const { db } = deps;
  const pageRows = deps.pageRows ?? EXPORT_PAGE_ROWS;
  return {
    async open(p, deviceId, r) {
      const device = await visibleDevice(db, p, deviceId);
      const { fromMs, toMs } = rangeBounds({ from: r.from, to: r.to });
      const timeZone = (await accounts.findById(db, device.accountId))?.timeZone ?? 'UTC';
      const file: ExportFile = {
        deviceId: device.id,
        deviceName: device.name || device.id,
        fromMs,
        toMs,
        timeZone,
        localTime: localTimeWriter(timeZone),
      };
      const writer = FORMAT_WRITERS[r.format];
      return {
        contentType: writer.contentType,
        fileName: fileName(device.id, fromMs, toMs, writer.extension),
        chunks: nonEmpty(fileText(db, writer, file, pageRows)),
      };
    },
  };
}

/** "352093081234567_20260301T000000Z_20260302T000000Z.gpx" */
function fileName(deviceId: string, fromMs: number, toMs: number, extension: string): string {
  const compact = (ms: number) => new Date(ms).toISOString().replace(/\.\d+/, '').replace(/[-:]/g, '');
  return `${deviceId.replace(/[^A-Za-z0-9._-]/g, '_')}_${compact(fromMs)}_${compact(toMs)}.${extension}`;
}

async function* fileText(db: Db, writer: FormatWriter, file: ExportFile, pageRows: number): AsyncGenerator<string> {
  yield writer.head(file);
  let count = 0;
  for await (const page of pages(db, file, pageRows)) {
    let text = '';
    for (const x of page) text += writer.fix(x, count++, file);
    yield text;
  }
  if (writer.fixesEnd) yield writer.fixesEnd;
  // A second pass over the same range (fixes stored meanwhile may join it): a line needs two points.
  if (writer.line && count >= 2) {
    const line = writer.line;
    yield line.head(file);
    for await (const page of pages(db, file, pageRows)) {
      let text = '';
      for (const x of page) text += line.fix(x);
      yield text;
    }
    yield line.tail();
  }
  yield writer.tail(file, count);
}

/** The range's fixes, a page at a time, oldest first. */
async function* pages(db: Db, file: ExportFile, pageRows: number): AsyncGenerator<Fix[]> {
  let afterMs = file.fromMs - 1;
  for (;;) {
    const rows = await locations.textsAfter(db, file.deviceId, afterMs, file.toMs, pageRows);
    if (rows.length) yield rows.map((r) => ({ ms: r.dateTime, location: JSON.parse(r.data) as Location }));
    if (rows.length < pageRows) return;
    afterMs = rows[rows.length - 1].dateTime;
    // SQLite reads are synchronous: give other requests and tracker frames their turn between pages.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** An empty chunk would read as nothing to a stream; leave them out. */
async function* nonEmpty(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  for await (const c of chunks) if (c) yield c;
}
