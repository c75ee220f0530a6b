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

export async function recent(db: Q, limit: number): Promise<UnknownDevice[]> {
  const rows = await db('unknown_devices').orderBy('last_seen', 'desc').limit(limit);
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
