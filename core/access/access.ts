/**
 * Who may do what (docs/contract.md "Who may do what"): a user sees only its own account (anything
 * else is 404), `admin` manages users, devices and groups, `write` reports locations, raises
 * alerts and edits groups, `read` reads; a user with a group sees only that group's devices.
 */
import type { Db } from '../db/db.js';
import type { Principal, Privilege } from '../model/user.js';
import type { DeviceRecord } from '../model/device.js';
import { DomainError, notFound } from '../errors.js';
import * as devices from './device-scope.repository.js';

const RANK: Record<Privilege, number> = { read: 1, execute: 1, write: 2, admin: 3 };

/**
 * `read` < `write` < `admin`; `execute` (send commands) reads as `read` does and is granted only
 * by itself or `admin` (a `write` user reports data but does not command devices).
 */
export function can(p: Principal, needed: Privilege): boolean {
  if (needed === 'execute') return p.privileges.has('execute') || p.privileges.has('admin');
  for (const have of p.privileges) if (RANK[have] >= RANK[needed]) return true;
  return false;
}

export function requirePrivilege(p: Principal, needed: Privilege): void {
  if (!can(p, needed)) {
    throw new DomainError('FORBIDDEN', `This needs the "${needed}" privilege, which your user does not have.`);
  }
}

/**
 * A device is visible to users of its account, and to a group-restricted user only in that group.
 * `accountId`: the device's account as already read (undefined: no such device); 404 otherwise.
 */
export async function checkScope(db: Db, p: Principal, deviceId: string, accountId: string | undefined): Promise<void> {
  if (!(await inScope(db, p, deviceId, accountId))) throw notFound('DEVICE_NOT_FOUND', `Device "${deviceId}"`);
}

async function inScope(db: Db, p: Principal, deviceId: string, accountId: string | undefined): Promise<boolean> {
  return accountId === p.accountId && (!p.groupId || (await devices.isInGroup(db, deviceId, p.groupId)));
}

/** Whether the caller may see the device; false alike for one that does not exist and one out of its scope. */
export async function isVisibleDevice(db: Db, p: Principal, deviceId: string): Promise<boolean> {
  return inScope(db, p, deviceId, await devices.accountOf(db, deviceId));
}

/** Throws 404 unless the caller may see the device (reads that need only the permission). */
export async function assertVisibleDevice(db: Db, p: Principal, deviceId: string): Promise<void> {
  await checkScope(db, p, deviceId, await devices.accountOf(db, deviceId));
}

/** The device if the caller may see it; otherwise 404, whether it exists elsewhere or not. */
export async function visibleDevice(db: Db, p: Principal, deviceId: string): Promise<DeviceRecord> {
  const d = await devices.lookup(db, deviceId);
  await checkScope(db, p, deviceId, d?.accountId);
  return d!;
}
