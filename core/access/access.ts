/**
 * Who may do what (CONTRACT.md "Who may do what"): a user sees only its own account (anything
 * else is 404), `admin` manages users, devices and groups, `write` reports locations, raises
 * alerts and edits groups, `read` reads; a user with a group sees only that group's devices.
 */
import type { Db } from '../db/db.js';
import type { Principal, Privilege } from '../model/user.js';
import type { DeviceRecord } from '../model/device.js';
import { DomainError, notFound } from '../errors.js';
import * as devices from '../devices/devices.repository.js';

const RANK: Record<Privilege, number> = { read: 1, write: 2, admin: 3 };

export function can(p: Principal, needed: Privilege): boolean {
  for (const have of p.privileges) if (RANK[have] >= RANK[needed]) return true;
  return false;
}

export function requirePrivilege(p: Principal, needed: Privilege): void {
  if (!can(p, needed)) {
    throw new DomainError('FORBIDDEN', `This needs the "${needed}" privilege, which your user does not have.`);
  }
}

/** The device if the caller may see it; otherwise 404, whether it exists elsewhere or not. */
export async function visibleDevice(db: Db, p: Principal, deviceId: string): Promise<DeviceRecord> {
  const d = await devices.findById(db, deviceId);
  if (!d || d.accountId !== p.accountId) throw notFound('DEVICE_NOT_FOUND', `Device "${deviceId}"`);
  if (p.groupId && !(await devices.isInGroup(db, deviceId, p.groupId))) throw notFound('DEVICE_NOT_FOUND', `Device "${deviceId}"`);
  return d;
}
