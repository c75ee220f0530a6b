import { randomUUID } from 'node:crypto';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Principal } from '../model/user.js';
import type { Group } from '../model/group.js';
import { DomainError, notFound } from '../errors.js';
import { isVisibleDevice, requirePrivilege } from '../access/access.js';
import * as groups from './groups.repository.js';
import * as users from '../users/users.repository.js';
import * as devices from '../devices/devices.repository.js';
import * as alertRules from '../rules/alert-rules.repository.js';
import * as forwards from '../forward/forwards.repository.js';

export interface GroupInput {
  name: string;
  description?: string | null;
  devices?: string[];
}

/**
 * The account's device groups (CONTRACT.md "Groups and users"). A user restricted to a group sees
 * only that group; any other group, or one of another account, answers GROUP_NOT_FOUND.
 */
export interface GroupsService {
  /** The groups the caller may see, each with its device ids. */
  list(p: Principal): Promise<Group[]>;
  /** One group the caller may see. */
  get(p: Principal, id: string): Promise<Group>;
  /** Creates a group (write privilege, no group restriction) of devices the caller can see. */
  create(p: Principal, input: GroupInput): Promise<Group>;
  /** Replaces a group's name, description and devices (write privilege). */
  update(p: Principal, id: string, input: GroupInput): Promise<Group>;
  /** Deletes a group (write privilege, no group restriction); its users are no longer restricted. GROUP_IN_USE while an alert rule watches it or a forward delivers it. */
  remove(p: Principal, id: string): Promise<void>;
  /** Whether a group holds a device, for scopes decided outside a request (the MQTT live feed). */
  includesDevice(groupId: string, deviceId: string): Promise<boolean>;
}

export interface GroupsDeps {
  db: Db;
  clock: Clock;
  /** called with the users a deleted group restricted (cached principals elsewhere) */
  onUsersChanged?: (userIds: string[]) => void;
  /** called with the devices that joined or left a group (cached memberships elsewhere: the live feed) */
  onDevicesChanged?: (deviceIds: string[]) => void;
}

export function createGroupsService(deps: GroupsDeps): GroupsService {
  const { db, clock } = deps;

  async function visible(p: Principal, id: string): Promise<groups.GroupRecord> {
    const g = await groups.findById(db, id);
    if (!g || g.accountId !== p.accountId || (p.groupId && p.groupId !== id)) throw notFound('GROUP_NOT_FOUND', `Group "${id}"`);
    return g;
  }

  async function present(records: groups.GroupRecord[]): Promise<Group[]> {
    const members = await groups.devicesOf(db, records.map((g) => g.id));
    return records.map((g) => groups.toGroup(g, members.get(g.id) ?? []));
  }

  /**
   * Every listed device must be one the caller can already see: its account's, and for a
   * group-restricted user its group's (else it could pull any device into its group and then see
   * it). A device out of sight gets the same answer as one that does not exist.
   */
  async function checkDevices(p: Principal, ids: string[]): Promise<string[]> {
    const unique = [...new Set(ids)];
    for (const id of unique) {
      if (!(await isVisibleDevice(db, p, id))) {
        const field = `devices[${ids.indexOf(id)}]`;
        throw new DomainError('VALIDATION_FAILED', `${field}: device "${id}" was not found.`, { field });
      }
    }
    return unique;
  }

  async function list(p: Principal): Promise<Group[]> {
    const all = await groups.listByAccount(db, p.accountId);
    return present(p.groupId ? all.filter((g) => g.id === p.groupId) : all);
  }

  async function get(p: Principal, id: string): Promise<Group> {
    return (await present([await visible(p, id)]))[0];
  }

  async function create(p: Principal, input: GroupInput): Promise<Group> {
    requirePrivilege(p, 'write');
    if (p.groupId) throw new DomainError('FORBIDDEN', 'A user restricted to a group cannot create groups.');
    const memberIds = await checkDevices(p, input.devices ?? []);
    const now = clock.now().getTime();
    const record = { id: randomUUID(), accountId: p.accountId, name: input.name, description: input.description ?? null, creation: now, lastModified: now };
    await db.transaction(async (trx) => {
      await groups.insert(trx, record);
      await groups.setDevices(trx, record.id, memberIds);
    });
    if (memberIds.length) deps.onDevicesChanged?.(memberIds);
    return get(p, record.id);
  }

  async function update(p: Principal, id: string, input: GroupInput): Promise<Group> {
    const current = await visible(p, id);
    requirePrivilege(p, 'write');
    const memberIds = await checkDevices(p, input.devices ?? []);
    const before = (await groups.devicesOf(db, [id])).get(id) ?? [];
    await db.transaction(async (trx) => {
      await groups.update(trx, { ...current, name: input.name, description: input.description ?? null, lastModified: clock.now().getTime() });
      await groups.setDevices(trx, id, memberIds);
    });
    const moved = [...before.filter((d) => !memberIds.includes(d)), ...memberIds.filter((d) => !before.includes(d))];
    if (moved.length) deps.onDevicesChanged?.(moved);
    return get(p, id);
  }

  async function remove(p: Principal, id: string): Promise<void> {
    await visible(p, id);
    requirePrivilege(p, 'write');
    if (p.groupId) throw new DomainError('FORBIDDEN', 'A user restricted to a group cannot delete it.');
    const restricted = (await users.listByAccount(db, p.accountId)).filter((u) => u.groupId === id).map((u) => u.id);
    const members = (await groups.devicesOf(db, [id])).get(id) ?? [];
    await db.transaction(async (trx) => {
      const ruleNames = await alertRules.namesUsingGroup(trx, id);
      if (ruleNames.length) {
        throw new DomainError('GROUP_IN_USE', `Group "${id}" is watched by the alert rule${ruleNames.length > 1 ? 's' : ''} ${ruleNames.map((n) => `"${n}"`).join(', ')}; change or delete ${ruleNames.length > 1 ? 'them' : 'it'} first.`, { rules: ruleNames });
      }
      const forwardNames = await forwards.namesUsingGroup(trx, id);
      if (forwardNames.length) {
        throw new DomainError('GROUP_IN_USE', `Group "${id}" is what the forward${forwardNames.length > 1 ? 's' : ''} ${forwardNames.map((n) => `"${n}"`).join(', ')} deliver${forwardNames.length > 1 ? '' : 's'}; change or delete ${forwardNames.length > 1 ? 'them' : 'it'} first.`, { forwards: forwardNames });
      }
      await users.clearGroup(trx, id);
      await groups.remove(trx, id);
    });
    deps.onUsersChanged?.(restricted);
    if (members.length) deps.onDevicesChanged?.(members);
  }

  /**
   * Whether a group holds a device, for scopes decided outside a request: the MQTT live feed asks
   * it for users restricted to a group (CONTRACT.md "Who may do what").
   */
  async function includesDevice(groupId: string, deviceId: string): Promise<boolean> {
    return devices.isInGroup(db, deviceId, groupId);
  }

  return { list, get, create, update, remove, includesDevice };
}
