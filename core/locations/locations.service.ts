import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Principal } from '../model/user.js';
import type { Location } from '../model/location.js';
import { isExpired, type DeviceRecord } from '../model/device.js';
import { DomainError, notFound } from '../errors.js';
import { assertVisibleDevice, checkScope, requirePrivilege, visibleDevice } from '../access/access.js';
import type { EventBus } from '../events/event-bus.js';
import { decodeCursor, encodeCursor, rangeBounds, type TimeRange } from '../paging.js';
import * as locations from './locations.repository.js';
import { createLastLocationCache } from './last-location.cache.js';

export interface LocationsDeps {
  db: Db;
  clock: Clock;
  events: EventBus;
  /** Remember last locations in memory: only where this process is the database's only writer (SQLite). */
  cacheLastLocations?: boolean;
}

/** A location as a client sends it: the REST shape, `dateTime` any ISO 8601 form. */
export type LocationInput = Location;

/** `serverTime`: when the batch was received, already formatted (it is the same for every item). */
export function normaliseLocation(input: LocationInput, serverTime: string, protocol: string): { dateTimeMs: number; location: Location } {
  const dateTimeMs = new Date(input.dateTime).getTime();
  const location: Location = { ...input, dateTime: new Date(dateTimeMs).toISOString(), serverTime, protocol: input.protocol ?? protocol };
  return { dateTimeMs, location };
}

export function createLocationsService(deps: LocationsDeps) {
  const { db, clock, events } = deps;
  const cache = deps.cacheLastLocations ? createLastLocationCache() : undefined;
  // Stored locations from every source (REST, trackers, MQTT) are announced after their commit.
  if (cache) events.onLocations((items) => items.forEach((i) => cache.forget(i.deviceId)));

  /** Stores locations of a device already resolved; returns what is stored for each fix time. */
  async function store(device: DeviceRecord, inputs: LocationInput[], protocol: string): Promise<Location[]> {
    const now = clock.now();
    if (isExpired(device, now.getTime())) {
      throw new DomainError('DEVICE_EXPIRED', `Device "${device.id}" is expired; reactivate it to store its locations.`);
    }
    const serverTime = now.toISOString();
    const rows = inputs.map((i) => {
      const n = normaliseLocation(i, serverTime, protocol);
      return { deviceId: device.id, dateTime: n.dateTimeMs, serverTime: now.getTime(), location: n.location };
    });
    const inserted = await db.transaction((trx) => locations.insertMany(trx, rows));
    events.locationsStored(inserted.map((r) => ({ accountId: device.accountId, deviceId: device.id, location: r.location })));
    if (inserted.length === rows.length) return rows.map((r) => r.location);
    // Some were already stored: answer with what is stored, so a resend sees the original.
    return locations.findMany(db, device.id, [...new Set(rows.map((r) => r.dateTime))]);
  }

  async function report(p: Principal, deviceId: string, inputs: LocationInput[]): Promise<Location[]> {
    const device = await visibleDevice(db, p, deviceId);
    requirePrivilege(p, 'write');
    return store(device, inputs, 'rest');
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

  /** A device was changed or deleted (after its commit). */
  function forgetDevice(deviceId: string): void {
    cache?.forget(deviceId);
  }

  return { store, report, query, lastJson, forgetDevice };
}

export type LocationsService = ReturnType<typeof createLocationsService>;
