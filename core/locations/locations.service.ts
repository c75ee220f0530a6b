import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Principal } from '../model/user.js';
import type { Location, LocationInput } from '../model/location.js';
import { isExpired, type DeviceRecord } from '../model/device.js';
import { DomainError, notFound } from '../errors.js';
import { assertVisibleDevice, checkScope, requirePrivilege, visibleDevice } from '../access/access.js';
import type { EventBus } from '../events/event-bus.js';
import { decodeCursor, encodeCursor, rangeBounds, type TimeRange } from '../paging.js';
import * as locations from './locations.repository.js';
import { createLastLocationCache } from './last-location.cache.js';
import { locationProblem } from '../ingest/location.checks.js';

export interface LocationsDeps {
  db: Db;
  clock: Clock;
  events: EventBus;
  /** Remember last locations in memory: only where this process is the database's only writer (SQLite). */
  cacheLastLocations?: boolean;
}

export type { LocationInput };

/**
 * A client's location as stored: `dateTime` in UTC, `serverTime` and `protocol` added, and every
 * field without a value (null) left out, the same rule as for tracker reports.
 * `serverTime`: when the batch was received, already formatted (it is the same for every item).
 */
export function normaliseLocation(input: LocationInput, serverTime: string, protocol: string): { dateTimeMs: number; location: Location } {
  const dateTimeMs = new Date(input.dateTime).getTime();
  const location = {} as Record<string, unknown>;
  for (const k in input) {
    const v = (input as Record<string, unknown>)[k];
    if (v !== null && v !== undefined) location[k] = v;
  }
  location.dateTime = new Date(dateTimeMs).toISOString();
  location.serverTime = serverTime;
  location.protocol = input.protocol ?? protocol;
  return { dateTimeMs, location: location as unknown as Location };
}

/**
 * The first input that fails the checks every position passes (core/ingest/location.checks.ts),
 * named as the request names it: `location.dateTime`, `locations.3.latitude`.
 */
export function firstLocationProblem(inputs: LocationInput[], nowMs: number, field: 'location' | 'locations'): { field: string; message: string } | undefined {
  for (let i = 0; i < inputs.length; i++) {
    const l = inputs[i];
    const problem = locationProblem({ fixMs: new Date(l.dateTime).getTime(), latitude: l.latitude, longitude: l.longitude, speed: l.speed, course: l.course }, nowMs);
    if (problem) return { field: field === 'location' ? `location.${problem.field}` : `locations.${i}.${problem.field}`, message: problem.message };
  }
  return undefined;
}

export function createLocationsService(deps: LocationsDeps) {
  const { db, clock, events } = deps;
  const cache = deps.cacheLastLocations ? createLastLocationCache() : undefined;
  if (cache) {
    // Announced after their commit: locations stored from every source, and changed or deleted devices.
    events.onLocations((items) => items.forEach((i) => cache.forget(i.deviceId)));
    events.onDeviceChanged((deviceId) => cache.forget(deviceId));
  }

  /**
   * Stores locations of a device already resolved; returns what is stored for each fix time. A
   * location failing the checks stores nothing of the request (400 naming the field).
   */
  async function store(device: DeviceRecord, inputs: LocationInput[], protocol: string, field: 'location' | 'locations' = 'locations'): Promise<Location[]> {
    const now = clock.now();
    if (isExpired(device, now.getTime())) {
      throw new DomainError('DEVICE_EXPIRED', `Device "${device.id}" is expired; reactivate it to store its locations.`);
    }
    const problem = firstLocationProblem(inputs, now.getTime(), field);
    if (problem) throw new DomainError('VALIDATION_FAILED', `${problem.field}: ${problem.message}`, { field: problem.field, issues: [problem] });
    const serverTime = now.toISOString();
    const rows = inputs.map((i) => {
      const n = normaliseLocation(i, serverTime, protocol);
      return { deviceId: device.id, dateTime: n.dateTimeMs, serverTime: now.getTime(), location: n.location };
    });
    const written = await db.transaction((trx) => locations.insertMany(trx, rows));
    events.locationsStored(written.map((r) => ({ accountId: device.accountId, deviceId: device.id, location: r.location })));
    if (written.length === rows.length) return rows.map((r) => r.location);
    // An identical resend (or a repeated dateTime): answer with what is stored.
    return locations.findMany(db, device.id, [...new Set(rows.map((r) => r.dateTime))]);
  }

  /** `field`: how the request named them (`location` or `locations`), for the 400's field. */
  async function report(p: Principal, deviceId: string, inputs: LocationInput[], field: 'location' | 'locations' = 'locations'): Promise<Location[]> {
    const device = await visibleDevice(db, p, deviceId);
    requirePrivilege(p, 'write');
    return store(device, inputs, 'rest', field);
  }

  async function query(p: Principal, deviceId: string, r: TimeRange): Promise<{ locations: Location[]; nextCursor: string | null }> {
    await assertVisibleDevice(db, p, deviceId);
    const { fromMs, toMs, limit } = rangeBounds(r);
    const after = r.cursor ? decodeCursor(r.cursor).t : undefined;
    const page = await locations.range(db, { deviceId, fromMs, toMs, afterMs: after, limit });
    return { locations: page.locations, nextCursor: page.more && page.lastMs !== null ? encodeCursor({ t: page.lastMs }) : null };
  }

  /** The last location as stored JSON text, for answers that embed it without re-serialising. */
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

  return { store, report, query, lastJson };
}

export type LocationsService = ReturnType<typeof createLocationsService>;
