/**
 * The fleet in one call (GET /api/lastLocations, docs/rest.md "The fleet"): every device the caller
 * may see, or those of one group, with its status and last location. The answer is built as text:
 * each stored location is embedded as it is, never parsed and written again, so 10,000 devices
 * cost one query and one string.
 */
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Principal } from '../model/user.js';
import type { DevicePresence } from '../model/presence.js';
import { isoUtc } from '../model/time.js';
import { notFound } from '../errors.js';
import { requirePrivilege } from '../access/access.js';
import * as groups from '../groups/groups.repository.js';
import type { EventBus } from '../events/event-bus.js';
import { createLastLocationCache } from '../locations/last-location.cache.js';
import { fleet, fleetDevices, lastTexts, type FleetRow } from './fleet.repository.js';

export interface FleetDeps {
  db: Db;
  clock: Clock;
  /** read at each request: the listeners attach theirs once bound */
  presence: () => DevicePresence;
  events: EventBus;
  /**
   * Remember last location texts in memory: only where this process is the database's only writer
   * (SQLite), as LocationsService does. Each answer then reads only the devices' rows, and the
   * locations of the devices whose last location changed since (forgotten after each commit).
   */
  cacheLastLocations?: boolean;
}

export interface FleetService {
  /** The JSON array text of `[{deviceId, name, status, transport?, lastSeen?, lastLocation}]`. */
  lastLocationsJson(p: Principal, groupId?: string): Promise<string>;
}

export function createFleetService(deps: FleetDeps): FleetService {
  const cache = deps.cacheLastLocations ? createLastLocationCache(100_000) : undefined;
  if (cache) {
    deps.events.onLocations((items) => items.forEach((i) => cache.forget(i.deviceId)));
    deps.events.onDeviceChanged((deviceId) => cache.forget(deviceId));
  }

  /** The rows with their locations: one join, or the devices' rows and the locations not remembered. */
  async function read(accountId: string, groupId: string | undefined): Promise<FleetRow[]> {
    if (!cache) return fleet(deps.db, accountId, groupId);
    const epoch = cache.epoch();
    const rows = await fleetDevices(deps.db, accountId, groupId);
    const missing: FleetRow[] = [];
    for (const r of rows) {
      const hit = cache.get(r.id);
      if (hit) r.data = hit.data;
      else missing.push(r);
    }
    if (missing.length === 0) return rows;
    const texts = await lastTexts(
      deps.db,
      missing.map((r) => r.id),
    );
    for (const r of missing) {
      r.data = texts.get(r.id) ?? null;
      cache.remember(r.id, { accountId, data: r.data }, epoch);
    }
    return rows;
  }

  async function lastLocationsJson(p: Principal, groupId?: string): Promise<string> {
    requirePrivilege(p, 'read');
    if (groupId !== undefined) {
      // the groups convention: another account's group, or one outside the caller's own, is not found
      const g = await groups.findById(deps.db, groupId);
      if (!g || g.accountId !== p.accountId || (p.groupId && p.groupId !== groupId))
        throw notFound('GROUP_NOT_FOUND', `Group "${groupId}"`);
    }
    const rows = await read(p.accountId, groupId ?? p.groupId ?? undefined);
    return render(rows, deps.presence(), deps.clock.now().getTime());
  }
  return { lastLocationsJson };
}

/** The status part of one entry, after `"status":`, each the same shape for the same status. */
function statusOf(row: FleetRow, presence: DevicePresence, here: Map<string, string>, nowMs: number): string {
  if (row.expiresAt !== null && row.expiresAt <= nowMs) return '"expired"';
  const connected = here.get(row.id);
  if (connected) return `"online","transport":"${connected}"`;
  const last = row.lastConnection;
  if (last !== null && nowMs - last < presence.recentMs) {
    const heard = presence.heardTransport(row.id, row.protocol, last);
    if (heard) return `"online","transport":"${heard}"`;
  }
  return `"offline","lastSeen":${last === null ? 'null' : `"${isoUtc(last)}"`}`;
}

function render(rows: FleetRow[], presence: DevicePresence, nowMs: number): string {
  if (rows.length === 0) return '[]';
  const here = presence.connectedHere();
  const parts = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    parts[i] =
      `{"deviceId":${JSON.stringify(r.id)},"name":${JSON.stringify(r.name)},"status":${statusOf(r, presence, here, nowMs)},` +
      `"lastLocation":${r.data ?? 'null'}}`;
  }
  return `[${parts.join(',')}]`;
}
