import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Principal } from '../model/user.js';
import type { Location, LocationInput } from '../model/location.js';
import { isExpired } from '../model/device.js';
import { DomainError, notFound } from '../errors.js';
import { assertVisibleDevice, checkScope, requirePrivilege, visibleDevice } from '../access/access.js';
import type { EventBus } from '../events/event-bus.js';
import type { ReportIntake } from '../model/report.js';
import { locationReport } from '../model/input.reports.js';
import { decodeCursor, encodeCursor, rangeBounds, type TimeRange } from '../paging.js';
import * as locations from './locations.repository.js';
import { createLastLocationCache } from './last-location.cache.js';

export interface LocationsDeps {
  db: Db;
  clock: Clock;
  events: EventBus;
  /** the one ingest path (core/ingest/ IngestService) */
  ingest: ReportIntake;
  /** Remember last locations in memory: only where this process is the database's only writer (SQLite). */
  cacheLastLocations?: boolean;
}

export type { LocationInput };

/**
 * A device's locations over REST: reported through the one ingest path, read by range or the last
 * one. A device out of the caller's sight answers DEVICE_NOT_FOUND.
 */
export interface LocationsService {
  /**
   * A client reports locations: through the one ingest path, as one unit. A location failing the
   * checks stores nothing of the request (400 naming the field, as the request names it:
   * `location.dateTime`, `locations.3.latitude`). Answers what is stored for each fix time.
   */
  report(
    p: Principal,
    deviceId: string,
    inputs: LocationInput[],
    field?: 'location' | 'locations',
  ): Promise<Location[]>;
  /** One page of a device's locations in a time range, and the cursor of the next page (null after the last). */
  query(p: Principal, deviceId: string, r: TimeRange): Promise<{ locations: Location[]; nextCursor: string | null }>;
  /** The last location as stored JSON text, for answers that embed it without re-serialising. */
  lastJson(p: Principal, deviceId: string): Promise<string>;
}

export function createLocationsService(deps: LocationsDeps): LocationsService {
  const { db, clock, events, ingest } = deps;
  const cache = deps.cacheLastLocations ? createLastLocationCache() : undefined;
  if (cache) {
    // Announced after their commit: locations stored from every source, and changed or deleted devices.
    events.onLocations((items) => items.forEach((i) => cache.forget(i.deviceId)));
    events.onDeviceChanged((deviceId) => cache.forget(deviceId));
  }

  async function report(
    p: Principal,
    deviceId: string,
    inputs: LocationInput[],
    field: 'location' | 'locations' = 'locations',
  ): Promise<Location[]> {
    const device = await visibleDevice(db, p, deviceId);
    requirePrivilege(p, 'write');
    if (isExpired(device, clock.now().getTime())) {
      throw new DomainError(
        'DEVICE_EXPIRED',
        `Device "${device.id}" is expired; reactivate it to store its locations.`,
      );
    }
    const result = await ingest.submit(device, 'rest', inputs.map(locationReport), { allOrNothing: true });
    if (result.refused) {
      const r = result.refused;
      const name = field === 'location' ? `location.${r.field}` : `locations.${r.index}.${r.field}`;
      throw new DomainError('VALIDATION_FAILED', `${name}: ${r.message}`, {
        field: name,
        issues: [{ field: name, message: r.message }],
      });
    }
    if (result.locations.length === inputs.length) return result.locations;
    // An identical resend (or a repeated dateTime): answer with what is stored.
    return locations.findMany(db, device.id, [...new Set(inputs.map((i) => new Date(i.dateTime).getTime()))]);
  }

  async function query(
    p: Principal,
    deviceId: string,
    r: TimeRange,
  ): Promise<{ locations: Location[]; nextCursor: string | null }> {
    await assertVisibleDevice(db, p, deviceId);
    const { fromMs, toMs, limit } = rangeBounds(r);
    const after = r.cursor ? decodeCursor(r.cursor).t : undefined;
    const page = await locations.range(db, { deviceId, fromMs, toMs, afterMs: after, limit });
    return {
      locations: page.locations,
      nextCursor: page.more && page.lastMs !== null ? encodeCursor({ t: page.lastMs }) : null,
    };
  }

  async function lastJson(p: Principal, deviceId: string): Promise<string> {
    let r = cache?.get(deviceId);
    if (!r) {
      const epoch = cache?.epoch() ?? 0;
      r = await locations.lastWithOwner(db, deviceId);
      if (r) cache?.remember(deviceId, r, epoch);
    }
    await checkScope(db, p, deviceId, r?.accountId);
    if (!r?.data) throw notFound('LOCATION_NOT_FOUND', `A location of device "${deviceId}"`);
    return r.data;
  }

  return { report, query, lastJson };
}
