import { randomUUID } from 'node:crypto';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Principal } from '../model/user.js';
import type { Group } from '../model/group.js';
import { DomainError, notFound } from '../errors.js';
import { isVisibleDevice, requirePrivilege } from '../access/access.js';
import * as groups from './groups.repository.js';
import { isInGroup } from '../access/device-scope.repository.js';

export interface GroupInput {
  name: string;
  description?: string | null;
  devices?: string[];
}

/**
 * The account's device groups (docs/contract.md "Groups and users"). A user restricted to a group sees
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
  /**
   * Deletes a group (write privilege, no group restriction). GROUP_IN_USE while a user is
   * restricted to it (deleting it would lift the restriction, which only an admin may do, by
   * changing the user), an alert rule watches it or a forward delivers it.
   */
  remove(p: Principal, id: string): Promise<void>;
  /** Whether a group holds a device, for scopes decided outside a request (the MQTT live feed). */
  includesDevice(groupId: string, deviceId: string): Promise<boolean>;
}

export interface GroupsDeps {
  db: Db;
  clock: Clock;
  /** called with the devices that joined or left a group (cached memberships elsewhere: the live feed) */
  onDevicesChanged?: (deviceIds: string[]) => void;
}

export function createGroupsService(deps: GroupsDeps): GroupsService {
  const { db, clock } = deps;

  async function list(p: Principal): Promise<Group[]> {
    const all = await groups.listByAccount(db, p.accountId);
    return present(db, p.groupId ? all.filter((g) => g.id === p.groupId) : all);
  }

  async function get(p: Principal, id: string): Promise<Group> {
    return (await present(db, [await visible(db, p, id)]))[0];
  }

  async function create(p: Principal, input: GroupInput): Promise<Group> {
    requirePrivilege(p, 'write');
    if (p.groupId) throw new DomainError('FORBIDDEN', 'A user restricted to a group cannot create groups.');
    const memberIds = await checkDevices(db, p, input.devices ?? []);
    const now = clock.now().getTime();
    const record = {
      id: randomUUID(),
      accountId: p.accountId,
      name: input.name,
      description: input.description ?? null,
      creation: now,
      lastModified: now,
    };
    await db.transaction(async (trx) => {
      await groups.insert(trx, record);
      await groups.setDevices(trx, record.id, memberIds);
    });
    if (memberIds.length) deps.onDevicesChanged?.(memberIds);
    return get(p, record.id);
  }

  async function update(p: Principal, id: string, input: GroupInput): Promise<Group> {
    const current = await visible(db, p, id);
    requirePrivilege(p, 'write');
    const memberIds = await checkDevices(db, p, input.devices ?? []);
    const before = (await groups.devicesOf(db, [id])).get(id) ?? [];
    await db.transaction(async (trx) => {
      await groups.update(trx, {
        ...current,
        name: input.name,
        description: input.description ?? null,
        lastModified: clock.now().getTime(),
      });
      await groups.setDevices(trx, id, memberIds);
    });
    const moved = [...before.filter((d) => !memberIds.includes(d)), ...memberIds.filter((d) => !before.includes(d))];
    if (moved.length) deps.onDevicesChanged?.(moved);
    return get(p, id);
  }

  async function remove(p: Principal, id: string): Promise<void> {
    await visible(db, p, id);
    requirePrivilege(p, 'write');
    if (p.groupId) throw new DomainError('FORBIDDEN', 'A user restricted to a group cannot delete it.');
    const members = (await groups.devicesOf(db, [id])).get(id) ?? [];
    await db.transaction(async (trx) => {
      const restricted = await groups.usersRestrictedTo(trx, id);
      const ruleNames = await groups.ruleNamesUsing(trx, id);
      const forwardNames = await groups.forwardNamesUsing(trx, id);
      if (restricted.length || ruleNames.length || forwardNames.length)
        throw groupInUse(id, restricted, ruleNames, forwardNames);
      await groups.remove(trx, id);
    });
    if (members.length) deps.onDevicesChanged?.(members);
  }

  /**
   * Whether a group holds a device, for scopes decided outside a request: the MQTT live feed asks
   * it for users restricted to a group (docs/contract.md "Who may do what").
   */
  async function includesDevice(groupId: string, deviceId: string): Promise<boolean> {
    return isInGroup(db, deviceId, groupId);
  }

  return { list, get, create, update, remove, includesDevice };
}

async function visible(db: Db, p: Principal, id: string): Promise<groups.GroupRecord> {
  const g = await groups.findById(db, id);
  if (!g || g.accountId !== p.accountId || (p.groupId && p.groupId !== id))
    throw notFound('GROUP_NOT_FOUND', `Group "${id}"`);
  return g;
}

async function present(db: Db, records: groups.GroupRecord[]): Promise<Group[]> {
  const members = await groups.devicesOf(
    db,
    records.map((g) => g.id),
  );
  return records.map((g) => groups.toGroup(g, members.get(g.id) ?? []));
}

/**
 * Every listed device must be one the caller can already see: its account's, and for a
 * group-restricted user its group's (else it could pull any device into its group and then see
 * it). A device out of sight gets the same answer as one that does not exist.
 */
async function checkDevices(db: Db, p: Principal, ids: string[]): Promise<string[]> {
  const unique = [...new Set(ids)];
  for (const id of unique) {
    if (!(await isVisibleDevice(db, p, id))) {
      const field = `devices[${ids.indexOf(id)}]`;
      throw new DomainError('VALIDATION_FAILED', `${field}: device "${id}" was not found.`, { field });
    }
  }
  return unique;
}

/**
 * GROUP_IN_USE, naming every use at once: the users restricted to the group (deleting it would
 * let them see every device of the account; only an admin may change that, by changing the
 * user), the alert rules that watch it, the forwards that deliver it.
 */
function groupInUse(
  id: string,
  restricted: { id: string; name: string }[],
  rules: string[],
  forwarded: string[],
): DomainError {
  const names = (list: string[]) => list.map((n) => `"${n}"`).join(', ');
  const plural = (list: unknown[], one: string, many: string) => (list.length > 1 ? many : one);
  const uses = [
    ...(restricted.length
      ? [
          `it restricts the ${plural(restricted, 'user', 'users')} ${names(restricted.map((u) => u.name))} to its devices (an admin gives ${plural(restricted, 'that user', 'them')} another group, or none)`,
        ]
      : []),
    ...(rules.length
      ? [`the alert ${plural(rules, 'rule', 'rules')} ${names(rules)} ${plural(rules, 'watches', 'watch')} it`]
      : []),
    ...(forwarded.length
      ? [
          `the ${plural(forwarded, 'forward', 'forwards')} ${names(forwarded)} ${plural(forwarded, 'delivers', 'deliver')} it`,
        ]
      : []),
  ];
  return new DomainError(
    'GROUP_IN_USE',
    `Group "${id}" is in use: ${uses.join('; ')}. It can be deleted once nothing uses it.`,
    {
      ...(restricted.length && { users: restricted.map((u) => u.id) }),
      ...(rules.length && { rules }),
      ...(forwarded.length && { forwards: forwarded }),
    },
  );
}
