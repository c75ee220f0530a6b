/** The fleet in one read: every device of a scope with its last location (GET /api/lastLocations). */
import type { Db } from '../db/db.js';

/** One device of the fleet, as stored: `data` is the last location's JSON text (null: none yet). */
export interface FleetRow {
  id: string;
  name: string;
  expiresAt: number | null;
  protocol: string | null;
  lastConnection: number | null;
  data: string | null;
}

const COLUMNS = 'd.id, d.name, d.expires_at, d.protocol, d.last_connection, l.data';
const ALL = `select ${COLUMNS} from devices d left join last_locations l on l.device_id = d.id where d.account_id = ? order by d.id`;
const IN_GROUP = `select ${COLUMNS} from group_devices g join devices d on d.id = g.device_id left join last_locations l on l.device_id = d.id where g.group_id = ? and d.account_id = ? order by d.id`;

/**
 * The account's devices (or those of one of its groups), ordered by id, each with its last
 * location's stored text: one query, whatever the fleet's size.
 */
export async function fleet(db: Db, accountId: string, groupId?: string): Promise<FleetRow[]> {
  const rows = groupId ? await db.read.all(IN_GROUP, groupId, accountId) : await db.read.all(ALL, accountId);
  const out = new Array<FleetRow>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as Record<string, unknown>;
    out[i] = {
      id: r.id as string,
      name: r.name as string,
      expiresAt: r.expires_at === null ? null : Number(r.expires_at),
      protocol: (r.protocol as string | null) ?? null,
      lastConnection: r.last_connection === null ? null : Number(r.last_connection),
      data: (r.data as string | null) ?? null,
    };
  }
  return out;
}

const DEVICE_COLUMNS = 'd.id, d.name, d.expires_at, d.protocol, d.last_connection';
const DEVICES_ALL = `select ${DEVICE_COLUMNS} from devices d where d.account_id = ? order by d.id`;
const DEVICES_IN_GROUP = `select ${DEVICE_COLUMNS} from group_devices g join devices d on d.id = g.device_id where g.group_id = ? and d.account_id = ? order by d.id`;

/** The same devices without their locations (`data` null): for a caller that remembers the locations. */
export async function fleetDevices(db: Db, accountId: string, groupId?: string): Promise<FleetRow[]> {
  const rows = groupId
    ? await db.read.all(DEVICES_IN_GROUP, groupId, accountId)
    : await db.read.all(DEVICES_ALL, accountId);
  return rows.map((r) => ({
    id: r.id as string,
    name: r.name as string,
    expiresAt: r.expires_at === null ? null : Number(r.expires_at),
    protocol: (r.protocol as string | null) ?? null,
    lastConnection: r.last_connection === null ? null : Number(r.last_connection),
    data: null,
  }));
}

/** The last location texts of these devices (absent: none yet), 500 ids per query. */
export async function lastTexts(db: Db, ids: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < ids.length; i += 500) {
    const part = ids.slice(i, i + 500);
    const rows = await db.read.all(
      `select device_id, data from last_locations where device_id in (${part.map(() => '?').join(',')})`,
      ...part,
    );
    for (const r of rows) out.set(r.device_id as string, r.data as string);
  }
  return out;
}
