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
