import type { Knex } from 'knex';

type Q = Knex | Knex.Transaction;

export interface UnknownDevice {
  identifier: string;
  protocol: string;
  reason: 'unknown' | 'expired';
  remoteAddress: string | null;
  firstSeen: string;
  lastSeen: string;
  attempts: number;
}

export interface Sighting {
  identifier: string;
  protocol: string;
  reason: 'unknown' | 'expired';
  remoteAddress: string | null;
  firstSeen: number;
  lastSeen: number;
  attempts: number;
}

export async function upsertMany(db: Q, sightings: Sighting[]): Promise<void> {
  for (const s of sightings) {
    await db.raw(
      `insert into unknown_devices (identifier, protocol, reason, remote_address, first_seen, last_seen, attempts)
       values (?, ?, ?, ?, ?, ?, ?)
       on conflict (identifier, protocol) do update set reason = excluded.reason, remote_address = excluded.remote_address,
         last_seen = excluded.last_seen, attempts = unknown_devices.attempts + excluded.attempts`,
      [s.identifier, s.protocol, s.reason, s.remoteAddress, s.firstSeen, s.lastSeen, s.attempts],
    );
  }
}

/** Whose sightings: an account's devices (only one group's, for a group-restricted user). */
export interface SightingScope {
  accountId: string;
  groupId?: string | null;
}

/**
 * The most recent sightings. Unscoped: all of them (for operators). Scoped: only identifiers that
 * are the account's devices, seen since the device was created (an id reused after a delete does
 * not show the former owner's sightings); an identifier that matches no device belongs to no account.
 */
export async function recent(db: Q, limit: number, scope?: SightingScope): Promise<UnknownDevice[]> {
  const q = db('unknown_devices').orderBy('unknown_devices.last_seen', 'desc').limit(limit).select('unknown_devices.*');
  if (scope) {
    q.join('devices', 'devices.id', 'unknown_devices.identifier')
      .where('devices.account_id', scope.accountId)
      .andWhere('unknown_devices.last_seen', '>=', db.ref('devices.creation'));
    if (scope.groupId)
      q.join('group_devices', 'group_devices.device_id', 'devices.id').andWhere(
        'group_devices.group_id',
        scope.groupId,
      );
  }
  const rows = await q;
  return rows.map((r: Record<string, unknown>) => ({
    identifier: String(r.identifier),
    protocol: String(r.protocol),
    reason: r.reason as UnknownDevice['reason'],
    remoteAddress: (r.remote_address as string | null) ?? null,
    firstSeen: new Date(Number(r.first_seen)).toISOString(),
    lastSeen: new Date(Number(r.last_seen)).toISOString(),
    attempts: Number(r.attempts),
  }));
}

/** Once a device is created, its identifier is no longer unknown. */
export async function forget(db: Q, identifier: string): Promise<void> {
  await db('unknown_devices').where({ identifier }).delete();
}
