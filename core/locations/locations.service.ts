import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Principal } from '../model/user.js';
import type { Location } from '../model/location.js';
import { isExpired, type DeviceRecord } from '../model/device.js';
import { DomainError, notFound } from '../errors.js';
import { assertVisibleDevice, requirePrivilege, visibleDevice } from '../access/access.js';
import type { EventBus } from '../events/event-bus.js';
import { decodeCursor, encodeCursor, rangeBounds, type TimeRange } from '../paging.js';
import * as locations from './locations.repository.js';

export interface LocationsDeps {
  db: Db;
  clock: Clock;
  events: EventBus;
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

  async function last(p: Principal, deviceId: string): Promise<Location> {
    await assertVisibleDevice(db, p, deviceId);
    const l = await locations.last(db, deviceId);
    if (!l) throw notFound('LOCATION_NOT_FOUND', `A location of device "${deviceId}"`);
    return l;
  }

  return { store, report, query, last };
}

export type LocationsService = ReturnType<typeof createLocationsService>;
