import test, { type ExecutionContext } from 'ava';
import { parse as parseCsv } from 'csv-parse/sync';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { DateTime } from 'luxon';
import { backends } from '../helpers/backends.js';
import { createDevice, startServer, type TestServer } from '../helpers/server.js';
import { capturingLogger } from '../helpers/capture-logger.js';
import { until } from '../helpers/wait.js';
import { insertRows, streamExport } from '../helpers/export-stream.js';

const ZONE = 'Europe/Madrid';
/** Every 10 minutes from 20:00 UTC on the day before Madrid's clocks go forward (01:00 UTC on 29 March 2026). */
const START_MS = Date.parse('2026-03-28T20:00:00Z');
const STEP_MS = 10 * 60_000;
const STORED = 300;
const iso = (i: number): string => new Date(START_MS + i * STEP_MS).toISOString();
/** From the 10th fix to the 289th, both bounds on a fix (inclusive at both ends). */
const FROM = iso(10);
const TO = iso(289);
/** A text field that needs every kind of quoting CSV and XML have. */
const AWKWARD = 'a,"b"\r\nc <d> & \'e\'';
const NAME = 'Truck <7> & "Co" \'North\'';

function location(i: number): Record<string, unknown> {
  return {
    dateTime: iso(i),
    latitude: 40 + i / 1000,
    longitude: -3.7 - i / 1000,
    speed: (i % 90) + 0.5,
    course: (i * 7) % 360,
    ...(i % 3 ? { altitude: 600 + i } : {}),
    ...(i % 2 ? { satellites: i % 12 } : {}),
    battery: 100 - (i % 100),
    attributes: { note: AWKWARD, i },
    ...(i % 50 === 0 ? { alerts: ['SOSButton'] } : {}),
  };
}

/** The history endpoint's answer for the range, every page of it. */
async function history(s: TestServer, deviceId: string, token = s.adminToken): Promise<any[]> {
  const all: any[] = [];
  let cursor: string | undefined;
  do {
    const r = await s.request('POST', `/api/devices/${deviceId}/locations`, {
      token,
      body: { from: FROM, to: TO, limit: 100, ...(cursor ? { cursor } : {}) },
    });
    if (r.status !== 200) throw new Error(`history: ${r.status} ${JSON.stringify(r.body)}`);
    all.push(...r.body.locations);
    cursor = r.body.nextCursor ?? undefined;
  } while (cursor);
  return all;
}

interface FileReply {
  status: number;
  headers: Headers;
  text: string;
}

async function exportFile(
  s: TestServer,
  deviceId: string,
  query: Record<string, string>,
  token = s.adminToken,
): Promise<FileReply> {
  const res = await fetch(`${s.base}/api/devices/${deviceId}/locations/export?${new URLSearchParams(query)}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function setUp(s: TestServer): Promise<void> {
  const zone = await s.request('PUT', '/api/account', { token: s.adminToken, body: { timeZone: ZONE } });
  if (zone.status !== 200) throw new Error(`time zone: ${zone.status} ${JSON.stringify(zone.body)}`);
  await createDevice(s, 'exp1', { name: NAME });
  await createDevice(s, 'other');
  for (let at = 0; at < STORED; at += 100) {
    const locations = Array.from({ length: 100 }, (_, k) => location(at + k));
    const r = await s.request('POST', '/api/devices/exp1/locations', { token: s.adminToken, body: { locations } });
    if (r.status !== 201) throw new Error(`store: ${r.status} ${JSON.stringify(r.body)}`);
  }
  // another device's fixes in the same range stay out of the file
  const r = await s.request('POST', '/api/devices/other/locations', {
    token: s.adminToken,
    body: { locations: [location(20), location(21)] },
  });
  if (r.status !== 201) throw new Error(`store other: ${r.status}`);
}

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  parseTagValue: false,
  isArray: (name) => ['trkpt', 'Placemark'].includes(name),
});

function parseXml(t: ExecutionContext, text: string): any {
  const valid = XMLValidator.validate(text);
  t.true(valid === true, `well-formed XML: ${JSON.stringify(valid)}`);
  return xml.parse(text);
}

const local = (dateTime: string): string =>
  DateTime.fromISO(dateTime, { zone: ZONE }).toISO({ suppressMilliseconds: true }) as string;

function checkAttachment(t: ExecutionContext, r: FileReply, type: string, extension: string): void {
  t.is(r.status, 200, r.text.slice(0, 300));
  t.is(r.headers.get('content-type')?.split(';')[0], type);
  t.is(
    r.headers.get('content-disposition'),
    `attachment; filename="exp1_20260328T214000Z_20260330T201000Z.${extension}"`,
  );
}

for (const backend of await backends()) {
  test(`api.locations.export (${backend}): csv, gpx, geojson and kml hold what the history holds, parsed by real parsers`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    await setUp(s);
    const expected = await history(s, 'exp1');
    t.is(expected.length, 280, 'the history of the range (both bounds inclusive)');
    const times = expected.map((l) => l.dateTime as string);

    // CSV: RFC 4180, one row per location, UTC and the account's local time
    const csv = await exportFile(s, 'exp1', { from: FROM, to: TO, format: 'csv' });
    checkAttachment(t, csv, 'text/csv', 'csv');
    t.true(csv.text.includes('\r\n'), 'CRLF line ends');
    const rows = parseCsv(csv.text, { columns: true, relax_column_count: false }) as Record<string, string>[];
    t.is(rows.length, expected.length);
    t.deepEqual(
      rows.map((r) => r.dateTime),
      times,
    );
    t.deepEqual(
      rows.map((r) => r.localTime),
      times.map(local),
      "local time in the account's zone, across the change to summer time",
    );
    t.is(rows[0].localTime, '2026-03-28T22:40:00+01:00');
    t.true(
      rows.some((r) => r.localTime === '2026-03-29T03:00:00+02:00'),
      'the first fix of summer time',
    );
    rows.forEach((r, i) => {
      const l = expected[i];
      t.is(Number(r.latitude), l.latitude);
      t.is(Number(r.longitude), l.longitude);
      t.is(r.altitude, l.altitude === undefined ? '' : String(l.altitude));
      t.deepEqual(JSON.parse(r.attributes), l.attributes);
    });
    t.is(JSON.parse(rows[0].attributes).note, AWKWARD, 'quotes, commas and line breaks survive');
    t.deepEqual(JSON.parse(rows.find((r) => r.alerts)!.alerts), ['SOSButton']);

    // GPX 1.1
    const gpx = await exportFile(s, 'exp1', { from: FROM, to: TO, format: 'gpx' });
    checkAttachment(t, gpx, 'application/gpx+xml', 'gpx');
    const g = parseXml(t, gpx.text).gpx;
    t.is(g['@version'], '1.1');
    t.is(g['@xmlns'], 'http://www.topografix.com/GPX/1/1');
    t.is(g.trk.name, NAME, 'the device name, escaped and read back');
    const points = g.trk.trkseg.trkpt as any[];
    t.is(points.length, expected.length);
    points.forEach((p, i) => {
      const l = expected[i];
      t.is(p.time, l.dateTime);
      t.is(Number(p['@lat']), l.latitude);
      t.is(Number(p['@lon']), l.longitude);
      t.is(p.ele === undefined ? undefined : Number(p.ele), l.altitude);
      t.is(p.sat === undefined ? undefined : Number(p.sat), l.satellites);
      const ext = p.extensions['gpxtpx:TrackPointExtension'];
      t.true(Math.abs(Number(ext['gpxtpx:speed']) - l.speed / 3.6) < 0.001, 'speed in m/s');
      t.is(Number(ext['gpxtpx:course']), l.course);
    });

    // GeoJSON: a FeatureCollection of Point features
    const geo = await exportFile(s, 'exp1', { from: FROM, to: TO, format: 'geojson' });
    checkAttachment(t, geo, 'application/geo+json', 'geojson');
    const fc = JSON.parse(geo.text);
    t.is(fc.type, 'FeatureCollection');
    t.is(fc.features.length, expected.length);
    fc.features.forEach((f: any, i: number) => {
      const l = expected[i];
      t.is(f.type, 'Feature');
      t.is(f.geometry.type, 'Point');
      const coordinates = [l.longitude, l.latitude, ...(l.altitude === undefined ? [] : [l.altitude])];
      t.deepEqual(f.geometry.coordinates, coordinates);
      const { latitude: _a, longitude: _b, ...properties } = l;
      t.deepEqual(f.properties, properties, 'every other field, dateTime in UTC');
    });

    // KML 2.2: a Placemark per location, then the track as a LineString
    const kml = await exportFile(s, 'exp1', { from: FROM, to: TO, format: 'kml' });
    checkAttachment(t, kml, 'application/vnd.google-earth.kml+xml', 'kml');
    const doc = parseXml(t, kml.text).kml.Document;
    t.is(doc.name, NAME);
    const fixes = doc.Folder.Placemark as any[];
    t.is(fixes.length, expected.length);
    fixes.forEach((p, i) => {
      const l = expected[i];
      t.is(p.TimeStamp.when, l.dateTime);
      t.is(p.name, local(l.dateTime).slice(0, 19).replace('T', ' '));
      t.true(p.description.startsWith(`Local time: ${local(l.dateTime)} (${ZONE})`), p.description);
      const [lon, lat] = String(p.Point.coordinates).split(',').map(Number);
      t.deepEqual([lon, lat], [l.longitude, l.latitude]);
    });
    const track = (doc.Placemark as any[])[0];
    const coordinates = String(track.LineString.coordinates).trim().split(/\s+/);
    t.is(coordinates.length, expected.length, 'the line has every location');
    t.is(
      coordinates[0],
      `${expected[0].longitude},${expected[0].latitude}${expected[0].altitude === undefined ? '' : `,${expected[0].altitude}`}`,
    );
  });

  test(`api.locations.export (${backend}): empty ranges are valid files; bad input is 400 with a code, before any byte`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    await createDevice(s, 'exp1');
    const empty = { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' };
    const csv = await exportFile(s, 'exp1', { ...empty });
    t.is(csv.status, 200);
    t.is(csv.headers.get('content-type')?.split(';')[0], 'text/csv', 'csv when no format is named');
    t.is(parseCsv(csv.text, { columns: true }).length, 0);
    t.true(csv.text.startsWith('dateTime,localTime,latitude,longitude,'), 'the header row alone');
    const gpx = await exportFile(s, 'exp1', { ...empty, format: 'gpx' });
    t.is(parseXml(t, gpx.text).gpx.trk.trkseg, '', 'an empty track segment');
    const geo = await exportFile(s, 'exp1', { ...empty, format: 'geojson' });
    t.deepEqual(JSON.parse(geo.text), { type: 'FeatureCollection', features: [] });
    const kml = parseXml(t, (await exportFile(s, 'exp1', { ...empty, format: 'kml' })).text).kml.Document;
    t.is(kml.Placemark, undefined, 'no line without two points');

    const bad: [Record<string, string>, string][] = [
      [{ ...empty, format: 'xlsx' }, 'format'],
      [{ ...empty, format: 'CSV' }, 'format'],
      [{ from: empty.from, format: 'csv' }, 'to'],
      [{ to: empty.to }, 'from'],
      [{ from: '2026-01-01', to: empty.to }, 'from'],
      [{ from: empty.to, to: empty.from }, 'from'],
    ];
    for (const [query, field] of bad) {
      const r = await exportFile(s, 'exp1', query);
      t.is(r.status, 400, JSON.stringify(query));
      t.is(r.headers.get('content-type'), 'application/json; charset=utf-8');
      const body = JSON.parse(r.text);
      t.like(body, { success: false, code: 'VALIDATION_FAILED', details: { field } }, JSON.stringify(query));
      t.is(typeof body.apiUsage, 'number');
    }
  });

  test(`api.locations.export (${backend}): the history's access rules: another account, a group, a reader, no token`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    await setUp(s);
    const group = (
      await s.request('POST', '/api/groups', { token: s.adminToken, body: { name: 'G', devices: ['other'] } })
    ).body.id as string;
    const mk = async (email: string, privileges: string[], g?: string): Promise<string> => {
      const r = await s.request('POST', '/api/users', {
        token: s.adminToken,
        body: { name: email, email, country: 'ES', timeZone: 'UTC', privileges, group: g },
      });
      if (r.status !== 201) throw new Error(JSON.stringify(r.body));
      return s.token(email, r.body.apiKey);
    };
    const reader = await mk('reader@example.com', ['read']);
    const restricted = await mk('restricted@example.com', ['read'], group);
    const b = await s.running.services.accounts.create({
      name: 'B',
      licenses: 5,
      adminUser: 'b-admin',
      adminApiKey: 'b-admin-key-0123456789',
    });
    const foreign = await s.token('b-admin', b.apiKey);
    const q = { from: FROM, to: TO, format: 'geojson' };

    const count = async (deviceId: string, token: string): Promise<number> => {
      const r = await exportFile(s, deviceId, q, token);
      t.is(r.status, 200, r.text.slice(0, 200));
      return JSON.parse(r.text).features.length;
    };
    t.is(await count('exp1', reader), (await history(s, 'exp1', reader)).length, 'a reader exports what it reads');
    t.is(await count('other', restricted), 2, "a group's user exports the group's device");

    const refused: [string, string, number, string][] = [
      ['exp1', restricted, 404, 'DEVICE_NOT_FOUND'],
      ['exp1', foreign, 404, 'DEVICE_NOT_FOUND'],
      ['nosuch', s.adminToken, 404, 'DEVICE_NOT_FOUND'],
      ['exp1', '', 401, 'INVALID_TOKEN'],
    ];
    const answers: string[] = [];
    for (const [deviceId, token, status, code] of refused) {
      const r = await exportFile(s, deviceId, q, token);
      t.is(r.status, status, `${deviceId} ${status}`);
      t.is(r.headers.get('content-disposition'), null, 'no file');
      const body = JSON.parse(r.text);
      t.is(body.code, code);
      if (status === 404) answers.push(body.error.replace(deviceId, 'ID'));
    }
    t.is(new Set(answers).size, 1, 'out of sight reads as not there');
    // the history endpoint agrees
    for (const [deviceId, token] of [
      ['exp1', restricted],
      ['exp1', foreign],
    ]) {
      const r = await s.request('POST', `/api/devices/${deviceId}/locations`, { token, body: { from: FROM, to: TO } });
      t.is(r.status, 404);
    }
  });
}

test('api.locations.export (sqlite): a failure mid-file cuts the answer short; a client that leaves ends the export', async (t) => {
  const logger = capturingLogger();
  const s = await startServer('sqlite', { logger });
  t.teardown(() => s.stop());
  await createDevice(s, 'cut');
  const t0 = Date.parse('2025-06-01T00:00:00Z');
  const rows = 100_000;
  await insertRows(s, 'cut', t0, rows);
  const path = `/api/devices/cut/locations/export?from=${new Date(t0).toISOString()}&to=${new Date(t0 + rows * 1000).toISOString()}`;

  const cut = await streamExport(s, path, async () => {
    await s.running.db.schema.renameTable('locations', 'locations_away');
  });
  await s.running.db.schema.renameTable('locations_away', 'locations');
  t.is(cut.status, 200, 'the file had begun');
  t.false(cut.complete, 'the client sees the answer cut short, not a complete file');
  t.true(cut.lines < rows, `${cut.lines} lines of ${rows + 1}`);
  await until('the cut logged', () => logger.at('warn', 'answer cut short').length === 1);

  const left = await streamExport(s, path, async (req) => {
    req.destroy();
  });
  t.false(left.complete);
  await until(
    'the server noticed the client leave',
    () => logger.at('debug', 'client left before the answer ended').length > 0,
  );
  t.is(logger.at('warn', 'answer cut short').length, 1, 'a client leaving is no failure');

  const whole = await streamExport(s, path);
  t.true(whole.complete);
  t.is(whole.lines, rows + 1, 'the next export is whole');
});
