import { addRoute, FileAnswer, JsonText } from '../route.js';
import type { RouteTable } from '../route.js';
import { okSchema } from '../schemas/common.schemas.js';
import { applyJsonPatch } from '../patch.js';
import { validationError } from '../route.js';
import {
  deviceCreateSchema,
  deviceResponse,
  devicesListQuery,
  devicesResponse,
  deviceUpdateSchema,
} from '../schemas/devices.schemas.js';
import {
  exportMediaTypes,
  lastLocationResponse,
  locationsBodySchema,
  locationsExportQuery,
  locationsResponse,
} from '../schemas/locations.schemas.js';
import { alertsBodySchema, alertsResponse } from '../schemas/alerts.schemas.js';
import { jsonPatchSchema } from '../schemas/groups-users.schemas.js';
import type { DevicesService } from '../../core/devices/devices.service.js';
import type { LocationsService } from '../../core/locations/locations.service.js';
import type { AlertsService } from '../../core/alerts/alerts.service.js';
import type { HistoryExportService } from '../../core/export/history-export.service.js';

const READ_ONLY = [
  'emailsSentToday',
  'smsSentToday',
  'expired',
  'protocol',
  'lastConnection',
  'creation',
  'groups',
  'id',
];

type DeviceServices = {
  devices: DevicesService;
  locations: LocationsService;
  alerts: AlertsService;
  historyExport: HistoryExportService;
};
/** the OpenAPI tag of every route here */
const TAG = 'Devices';

export function deviceRoutes(api: RouteTable, s: DeviceServices): void {
  deviceRecordRoutes(api, s.devices);
  deviceHistoryRoutes(api, s);
  historyExportRoute(api, s.historyExport);
}

/** The device records: list, create, get, replace, patch, delete. */
function deviceRecordRoutes(api: RouteTable, devices: DevicesService): void {
  deviceCollectionRoutes(api, devices);
  deviceItemRoutes(api, devices);
}

/** `/api/devices`: list and create. */
function deviceCollectionRoutes(api: RouteTable, devices: DevicesService): void {
  const tags = [TAG];
  addRoute(api, {
    method: 'get',
    path: '/api/devices',
    tags,
    summary: 'List devices',
    description: 'The active devices the caller may see; ext `?status=expired|all`.',
    query: devicesListQuery,
    responses: { 200: { description: 'Devices.', schema: devicesResponse } },
    handler: async (_ctx, { principal, query }) => ({
      body: { success: true, devices: await devices.list(principal, query.status ?? 'active') },
    }),
  });
  addRoute(api, {
    method: 'post',
    path: '/api/devices',
    tags,
    summary: 'ext: create a device (admin)',
    description: 'Needs a free licence when the device is active (409 NO_LICENSE_AVAILABLE otherwise).',
    body: deviceCreateSchema,
    responses: {
      201: { description: 'Created.', schema: deviceResponse },
      403: { description: 'Not an admin.' },
      409: { description: 'Id taken or no licence free.' },
    },
    handler: async (_ctx, { principal, body }) => ({
      status: 201,
      body: { success: true, device: await devices.create(principal, body) },
    }),
  });
}

/** One device: get, replace, patch, delete. */
function deviceItemRoutes(api: RouteTable, devices: DevicesService): void {
  const tags = [TAG];
  addRoute(api, {
    method: 'get',
    path: '/api/devices/{deviceId}',
    tags,
    summary: 'Get a device',
    responses: {
      200: { description: 'The device.', schema: deviceResponse },
      404: { description: 'No such device in your account.' },
    },
    handler: async (_ctx, { principal, params }) => ({
      body: { success: true, device: await devices.get(principal, params.deviceId) },
    }),
  });
  addRoute(api, {
    method: 'put',
    path: '/api/devices/{deviceId}',
    tags,
    summary: 'ext: replace a device (admin)',
    description:
      'Moving `expires` of an expired device to the future or null needs a free licence. Limits may change at any time. Absent optional fields take their defaults; an absent mqttPassword keeps the current one.',
    body: deviceUpdateSchema,
    responses: {
      200: { description: 'Updated.', schema: deviceResponse },
      404: { description: 'No such device.' },
      409: { description: 'No licence free.' },
    },
    handler: async (_ctx, { principal, params, body }) => ({
      body: { success: true, device: await devices.update(principal, params.deviceId, body) },
    }),
  });
  addRoute(api, {
    method: 'patch',
    path: '/api/devices/{deviceId}',
    tags,
    summary: 'ext: change a device with JSON Patch (admin)',
    body: jsonPatchSchema,
    responses: {
      200: { description: 'Updated.', schema: deviceResponse },
      404: { description: 'No such device.' },
      409: { description: 'A test op failed, or no licence free.' },
    },
    handler: async (_ctx, { principal, params, body }) => {
      const current = await devices.get(principal, params.deviceId);
      const patched = deviceUpdateSchema.safeParse(applyJsonPatch(current, body, READ_ONLY, api.bodyLimitBytes));
      if (!patched.success) throw validationError(patched.error, 'body');
      return { body: { success: true, device: await devices.update(principal, params.deviceId, patched.data) } };
    },
  });
  addRoute(api, {
    method: 'delete',
    path: '/api/devices/{deviceId}',
    tags,
    summary: 'ext: delete a device and its history (admin)',
    responses: { 200: { description: 'Deleted.', schema: okSchema }, 404: { description: 'No such device.' } },
    handler: async (_ctx, { principal, params }) => {
      await devices.remove(principal, params.deviceId);
      return { body: { success: true } };
    },
  });
}

/** A device's locations and alerts: reported through the API, or read by range. */
function deviceHistoryRoutes(api: RouteTable, s: DeviceServices): void {
  const tags = [TAG];
  addRoute(api, {
    method: 'get',
    path: '/api/devices/{deviceId}/lastLocation',
    tags,
    summary: 'Last location',
    description: 'The location with the latest dateTime (not the last received).',
    responses: {
      200: { description: 'The last location.', schema: lastLocationResponse },
      404: { description: 'No such device, or it has no location yet.' },
    },
    handler: async (_ctx, { principal, params }) => ({
      body: { success: true, lastLocation: new JsonText(await s.locations.lastJson(principal, params.deviceId)) },
    }),
  });
  addRoute(api, {
    method: 'post',
    path: '/api/devices/{deviceId}/locations',
    tags,
    summary: 'Report locations, or read a range',
    description:
      "With `location` or `locations`: store them (201, needs `write`), one per dateTime: an identical resend changes nothing, one with other values replaces the stored one (a correction); the answer shows what is stored. Each location passes the same checks as a tracker's: dateTime from 2000 on and at most 25 h ahead of the server, |latitude| ≤ 90, |longitude| ≤ 180, speed ≥ 0, course 0–360 (400 naming the field, nothing stored); a location at (0, 0) with `valid: false` is a tracker without a fix and is not stored (the answer leaves it out). With `from` and `to`: return locations in that range, oldest first, `limit` per page with `nextCursor`. Both: store, then return the range (200).",
    body: locationsBodySchema,
    responses: {
      200: { description: 'The range.', schema: locationsResponse },
      201: { description: 'Stored.', schema: locationsResponse },
      404: { description: 'No such device.' },
      409: { description: 'The device is expired.' },
    },
    handler: async (_ctx, { principal, params, body }) => {
      const toStore = body.locations ?? (body.location ? [body.location] : []);
      const stored = toStore.length
        ? await s.locations.report(principal, params.deviceId, toStore, body.locations ? 'locations' : 'location')
        : [];
      if (body.from && body.to) {
        const page = await s.locations.query(principal, params.deviceId, {
          from: body.from,
          to: body.to,
          limit: body.limit,
          cursor: body.cursor,
        });
        return { body: { success: true, locations: page.locations, nextCursor: page.nextCursor } };
      }
      return { status: 201, body: { success: true, locations: stored } };
    },
  });
  addRoute(api, {
    method: 'post',
    path: '/api/devices/{deviceId}/alerts',
    tags,
    summary: 'Raise an alert, or read a range',
    description:
      'With `alert`: store it and notify it by e-mail and SMS within the daily limits (201, needs `write`). With `from`, `to` and optional `alertName`: return the alerts in that range, oldest first.',
    body: alertsBodySchema,
    responses: {
      200: { description: 'The range.', schema: alertsResponse },
      201: { description: 'Raised.', schema: alertsResponse },
      404: { description: 'No such device.' },
    },
    handler: async (_ctx, { principal, params, body }) => {
      if (body.alert) {
        const alert = await s.alerts.raise(principal, params.deviceId, body.alert);
        return { status: 201, body: { success: true, alerts: [alert] } };
      }
      const page = await s.alerts.query(principal, params.deviceId, {
        from: body.from!,
        to: body.to!,
        alertName: body.alertName,
        limit: body.limit,
        cursor: body.cursor,
      });
      return { body: { success: true, alerts: page.alerts, nextCursor: page.nextCursor } };
    },
  });
}

/** The history as a file (docs/rest.md "History export"). */
function historyExportRoute(api: RouteTable, historyExport: HistoryExportService): void {
  addRoute(api, {
    method: 'get',
    path: '/api/devices/{deviceId}/locations/export',
    tags: [TAG],
    summary: 'ext: export the history as a file',
    description:
      "The locations with dateTime in [from, to], oldest first, as a file (`Content-Disposition: attachment`), streamed as it is read: any range, at the speed the client reads. `csv`: a header row, then one row per location (RFC 4180, CRLF), `dateTime` in UTC and `localTime` in the account's time zone, arrays and objects as JSON. `gpx`: GPX 1.1, one trk/trkseg, a trkpt per location with ele, time (UTC), sat, and speed (m/s) and course in Garmin's TrackPointExtension v2. `geojson`: a FeatureCollection of Point features, one per location ([longitude, latitude, altitude]), the other fields as properties, dateTime UTC. `kml`: KML 2.2, a folder of Placemarks, one per location with its TimeStamp (UTC) and a name and description in the account's time zone, then the track as one LineString. The same access as the range endpoint (404 for a device out of sight); an error before the first byte is the usual JSON envelope, one after it cuts the file short.",
    query: locationsExportQuery,
    responses: {
      200: { description: 'The file.', files: exportMediaTypes },
      404: { description: 'No such device in your sight.' },
    },
    handler: async (_ctx, { principal, params, query }) => {
      const file = await historyExport.open(principal, params.deviceId, query);
      return new FileAnswer(file.contentType, file.fileName, file.chunks);
    },
  });
}
