/**
 * The history export's file formats, one writer each (docs/rest.md "History export"). A writer
 * turns one fix at a time into text, so the export never holds more than a page of fixes:
 * `head`, then `fix` for each fix in time order and `fixesEnd`, then (KML only) the track as one
 * line in a second pass over the same fixes, then `tail`. Times are UTC (ISO 8601, `Z`) where the format defines
 * them (GPX, GeoJSON, KML's TimeStamp); CSV's `localTime` column and KML's names and descriptions
 * show the account's time zone.
 */
import type { Location } from '../model/location.js';
import { csvField, escapeXml } from './export.text.js';

export const EXPORT_FORMATS = ['csv', 'gpx', 'geojson', 'kml'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** What every part of a file may show about the export as a whole. */
export interface ExportFile {
  deviceId: string;
  deviceName: string;
  fromMs: number;
  toMs: number;
  /** the account's IANA time zone */
  timeZone: string;
  /** epoch ms → ISO 8601 in the account's time zone, with its offset */
  localTime(ms: number): string;
}

/** A stored location and its fix time (epoch ms, the history's key). */
export interface Fix {
  ms: number;
  location: Location;
}

export interface FormatWriter {
  /** the Content-Type of the answer */
  contentType: string;
  /** the file name's extension */
  extension: string;
  head(f: ExportFile): string;
  /** one fix; `index` counts the fixes written before it */
  fix(x: Fix, index: number, f: ExportFile): string;
  /** written after the last fix, before the line */
  fixesEnd?: string;
  /** a second pass that draws the fixes as one line, written when there are at least two */
  line?: { head(f: ExportFile): string; fix(x: Fix): string; tail(): string };
  tail(f: ExportFile, count: number): string;
}

const utc = (ms: number): string => new Date(ms).toISOString();
const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

// --- CSV (RFC 4180: a header row, CRLF line ends, quoted fields where needed) -----------------

type Column = [name: string, value: (x: Fix, f: ExportFile) => unknown];

/** A column with the location's field of the same name. */
const field = (name: string): Column => [name, (x) => (x.location as unknown as Record<string, unknown>)[name]];

/** Every field of a location, scalar ones first; arrays and objects as JSON text. */
const CSV_COLUMNS: Column[] = [
  ['dateTime', (x) => utc(x.ms)],
  ['localTime', (x, f) => f.localTime(x.ms)],
  ...[
    'latitude',
    'longitude',
    'altitude',
    'speed',
    'course',
    'accuracy',
    'satellites',
    'valid',
    'battery',
    'fuel',
    'fuel2',
    'temperature',
    'temperature2',
    'rpm',
    'milleage',
    'totalDistance',
    'inactiveSeconds',
    'sensorTime1',
    'sensorTime2',
    'sensorTime3',
    'sensorTime4',
    'hasCriticalAlert',
    'alerts',
    'alertTexts',
    'warnings',
    'warningTexts',
    'inputs',
    'outputs',
    'attributes',
    'accessoriesAttributes',
    'protocol',
    'serverTime',
  ].map(field),
];

function csvValue(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return csvField(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return csvField(JSON.stringify(v));
}

const csv: FormatWriter = {
  contentType: 'text/csv; charset=utf-8; header=present',
  extension: 'csv',
  head: () => `${CSV_COLUMNS.map(([name]) => name).join(',')}\r\n`,
  fix: (x, _i, f) => `${CSV_COLUMNS.map(([, value]) => csvValue(value(x, f))).join(',')}\r\n`,
  tail: () => '',
};

// --- GPX 1.1 (topografix.com/GPX/1/1), speed and course in Garmin's TrackPointExtension v2 -----

const GPX_NS = 'http://www.topografix.com/GPX/1/1';
const GPXTPX_NS = 'http://www.garmin.com/xmlschemas/TrackPointExtension/v2';

/** The extension's speed is in m/s; its course is 0 ≤ course < 360. */
function gpxExtension(l: Location): string {
  let inner = '';
  if (num(l.speed)) inner += `<gpxtpx:speed>${Math.round((l.speed / 3.6) * 1000) / 1000}</gpxtpx:speed>`;
  if (num(l.course)) inner += `<gpxtpx:course>${l.course % 360}</gpxtpx:course>`;
  return inner ? `<extensions><gpxtpx:TrackPointExtension>${inner}</gpxtpx:TrackPointExtension></extensions>` : '';
}

const gpx: FormatWriter = {
  contentType: 'application/gpx+xml; charset=utf-8',
  extension: 'gpx',
  head: (f) =>
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<gpx version="1.1" creator="trackgate" xmlns="${GPX_NS}" xmlns:gpxtpx="${GPXTPX_NS}">\n` +
    `<metadata><name>${escapeXml(f.deviceName)}</name><desc>${escapeXml(rangeText(f))}</desc></metadata>\n` +
    `<trk><name>${escapeXml(f.deviceName)}</name><trkseg>\n`,
  fix: ({ ms, location: l }) => {
    // GPX 1.1 wptType order: ele, time, …, sat, …, extensions
    let inner = num(l.altitude) ? `<ele>${l.altitude}</ele>` : '';
    inner += `<time>${utc(ms)}</time>`;
    if (num(l.satellites) && Number.isInteger(l.satellites) && l.satellites >= 0) inner += `<sat>${l.satellites}</sat>`;
    return `<trkpt lat="${l.latitude}" lon="${l.longitude}">${inner}${gpxExtension(l)}</trkpt>\n`;
  },
  tail: () => '</trkseg></trk>\n</gpx>\n',
};

// --- GeoJSON (RFC 7946): a FeatureCollection of Point features, one per fix -------------------

const geojson: FormatWriter = {
  contentType: 'application/geo+json; charset=utf-8',
  extension: 'geojson',
  head: () => '{"type":"FeatureCollection","features":[\n',
  fix: ({ ms, location }, index) => {
    const { latitude, longitude, ...properties } = location;
    const coordinates = num(location.altitude) ? [longitude, latitude, location.altitude] : [longitude, latitude];
    const feature = {
      type: 'Feature',
      geometry: { type: 'Point', coordinates },
      properties: { ...properties, dateTime: utc(ms) },
    };
    return `${index ? ',\n' : ''}${JSON.stringify(feature)}`;
  },
  tail: () => '\n]}\n',
};

// --- KML 2.2 (OGC 07-147r2): a Placemark per fix with its TimeStamp, then the track as a LineString

const KML_NS = 'http://www.opengis.net/kml/2.2';

/** "2026-03-01 11:00:00 (Europe/Madrid)": a name a person reads, in the account's time zone. */
const localLabel = (ms: number, f: ExportFile): string => f.localTime(ms).slice(0, 19).replace('T', ' ');

function kmlDescription(x: Fix, f: ExportFile): string {
  const l = x.location;
  const lines = [`Local time: ${f.localTime(x.ms)} (${f.timeZone})`];
  if (num(l.speed)) lines.push(`Speed: ${l.speed} km/h`);
  if (num(l.course)) lines.push(`Course: ${l.course}°`);
  if (num(l.altitude)) lines.push(`Altitude: ${l.altitude} m`);
  if (l.alerts?.length) lines.push(`Alerts: ${l.alerts.join(', ')}`);
  // HTML line breaks, escaped as XML: KML descriptions are shown as HTML
  return escapeXml(lines.join('<br>'));
}

const kmlPoint = (l: Location): string =>
  num(l.altitude) ? `${l.longitude},${l.latitude},${l.altitude}` : `${l.longitude},${l.latitude}`;

const kml: FormatWriter = {
  contentType: 'application/vnd.google-earth.kml+xml; charset=utf-8',
  extension: 'kml',
  head: (f) =>
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<kml xmlns="${KML_NS}"><Document>\n` +
    `<name>${escapeXml(f.deviceName)}</name><description>${escapeXml(rangeText(f))}</description>\n` +
    '<Style id="fix"><IconStyle><scale>0.5</scale></IconStyle><LabelStyle><scale>0</scale></LabelStyle></Style>\n' +
    '<Style id="track"><LineStyle><color>ffff0000</color><width>3</width></LineStyle></Style>\n' +
    '<Folder><name>Positions</name>\n',
  fix: (x, _i, f) =>
    `<Placemark><name>${escapeXml(localLabel(x.ms, f))}</name><styleUrl>#fix</styleUrl>` +
    `<description>${kmlDescription(x, f)}</description>` +
    `<TimeStamp><when>${utc(x.ms)}</when></TimeStamp>` +
    `<Point><coordinates>${kmlPoint(x.location)}</coordinates></Point></Placemark>\n`,
  fixesEnd: '</Folder>\n',
  line: {
    head: (f) =>
      `<Placemark><name>${escapeXml(`Track of ${f.deviceName}`)}</name><styleUrl>#track</styleUrl>` +
      '<LineString><tessellate>1</tessellate><coordinates>\n',
    fix: (x) => `${kmlPoint(x.location)}\n`,
    tail: () => '</coordinates></LineString></Placemark>\n',
  },
  tail: () => '</Document></kml>\n',
};

/** "Locations of device 352… from 2026-03-01T00:00:00.000Z to 2026-03-02T00:00:00.000Z" */
function rangeText(f: ExportFile): string {
  return `Locations of device ${f.deviceId} from ${utc(f.fromMs)} to ${utc(f.toMs)}`;
}

export const FORMAT_WRITERS: Record<ExportFormat, FormatWriter> = { csv, gpx, geojson, kml };
