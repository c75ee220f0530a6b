import { randomUUID } from 'node:crypto';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Principal, Privilege, User, UserRecord } from '../model/user.js';
import { iso, isoRequired } from '../model/time.js';
import { DomainError, notFound } from '../errors.js';
import { can, requirePrivilege } from '../access/access.js';
import * as users from './users.repository.js';
import * as groups from '../groups/groups.repository.js';
import { generateApiKey, hashApiKey, hashPassword } from '../secrets.js';
import { isTimeZone, toAlpha2 } from '../reference/reference-data.js';

export interface UserInput {
  name: string;
  email: string;
  country: string;
  timeZone: string;
  userName?: string;
  description?: string | null;
  message?: string | null;
  disabled?: boolean;
  disabledMessage?: string | null;
  tags?: Record<string, string>;
  privileges?: Privilege[];
  group?: string | null;
  from?: string | null;
  expires?: string | null;
  /** write-only; absent keeps the current one */
  password?: string | null;
}

export const present = (u: UserRecord): User => ({
  id: u.id,
  userName: u.userName,
  name: u.name,
  email: u.email,
  country: u.country,
  timeZone: u.timeZone,
  description: u.description,
  message: u.message,
  disabled: u.disabled,
  disabledMessage: u.disabledMessage,
  tags: u.tags,
  privileges: u.privileges,
  group: u.groupId,
  from: iso(u.fromAt),
  expires: iso(u.expiresAt),
  password: null,
  creation: isoRequired(u.creation),
  modification: isoRequired(u.modification),
  lastLogin: iso(u.lastLogin),
});

const ms = (v: string | null | undefined): number | null => (v ? new Date(v).getTime() : null);

/**
 * The account's users (docs/contract.md "Groups and users", "Who may do what"). Each call is made as a
 * principal: a non-admin sees only itself; a user of another account answers USER_NOT_FOUND.
 */
export interface UsersService {
  /** Every user of the caller's account for an admin, else just the caller. */
  list(p: Principal): Promise<User[]>;
  /** One user the caller may see. */
  get(p: Principal, id: string): Promise<User>;
  /** Creates a user (admin only) and returns it with its first API key, shown only this once. */
  create(p: Principal, input: UserInput): Promise<{ user: User; apiKey: string }>;
  /** Replaces a user's fields (admin only); an admin cannot take its own admin privilege away. */
  update(p: Principal, id: string, input: UserInput): Promise<User>;
  /** Deletes a user (admin only), never the caller itself. */
  remove(p: Principal, id: string): Promise<void>;
  /** Issues a new API key (the caller's own, or any as an admin): the old key and its tokens stop working at once. */
  newApiKey(p: Principal, id: string): Promise<{ user: User; apiKey: string }>;
}

export interface UsersDeps {
  db: Db;
  clock: Clock;
  /** called after a user changed or was deleted (cached principals elsewhere) */
  onChange?: (userId: string) => void;
}

export function createUsersService(deps: UsersDeps): UsersService {
  const { db, clock } = deps;

  async function list(p: Principal): Promise<User[]> {
    if (!can(p, 'admin')) return [present(await visible(db, p, p.userId))];
    return (await users.listByAccount(db, p.accountId)).map(present);
  }

  async function get(p: Principal, id: string): Promise<User> {
    return present(await visible(db, p, id));
  }

  const create = (p: Principal, raw: UserInput) => createUser(deps, p, raw);

  const update = (p: Principal, id: string, raw: UserInput) => updateUser(deps, p, id, raw);

  async function remove(p: Principal, id: string): Promise<void> {
    await visible(db, p, id);
    requirePrivilege(p, 'admin');
    if (id === p.userId) throw new DomainError('FORBIDDEN', 'You cannot delete your own user.');
    await users.remove(db, id);
    deps.onChange?.(id);
  }

  async function newApiKey(p: Principal, id: string): Promise<{ user: User; apiKey: string }> {
    const current = await visible(db, p, id);
    const apiKey = generateApiKey();
    const next = {
      ...current,
      apiKeyHash: hashApiKey(apiKey),
      keyVersion: current.keyVersion + 1,
      modification: clock.now().getTime(),
    };
    await users.update(db, next);
    deps.onChange?.(id);
    return { user: present(next), apiKey };
  }

  return { list, get, create, update, remove, newApiKey };
}

async function updateUser(deps: UsersDeps, p: Principal, id: string, raw: UserInput): Promise<User> {
  const { db, clock } = deps;
  const current = await visible(db, p, id);
  requirePrivilege(p, 'admin');
  const input = await validate(db, p, raw);
  const userName = input.userName ?? current.userName;
  if (id === p.userId && !(input.privileges ?? current.privileges).includes('admin')) {
    throw new DomainError('VALIDATION_FAILED', 'privileges: you cannot remove your own admin privilege.', {
      field: 'privileges',
    });
  }
  const next: UserRecord = {
    ...current,
    userName,
    name: input.name,
    email: input.email,
    country: input.country,
    timeZone: input.timeZone,
    description: input.description ?? null,
    message: input.message ?? null,
    disabled: input.disabled ?? false,
    disabledMessage: input.disabledMessage ?? null,
    tags: input.tags ?? {},
    privileges: input.privileges ?? current.privileges,
    groupId: input.group === undefined ? current.groupId : input.group,
    fromAt: ms(input.from),
    expiresAt: ms(input.expires),
    passwordHash:
      input.password === undefined || input.password === null ? current.passwordHash : hashPassword(input.password),
    modification: clock.now().getTime(),
  };
  await db.transaction(async (trx) => {
    const other = await users.findByUserName(trx, userName);
    if (other && other.id !== id)
      throw new DomainError('USER_EXISTS', `A user named "${userName}" already exists; choose another userName.`, {
        field: 'userName',
      });
    await users.update(trx, next);
  });
  deps.onChange?.(id);
  return present(next);
}

async function createUser(deps: UsersDeps, p: Principal, raw: UserInput): Promise<{ user: User; apiKey: string }> {
  const { db, clock } = deps;
  requirePrivilege(p, 'admin');
  const input = await validate(db, p, raw);
  const userName = input.userName ?? input.email;
  const apiKey = generateApiKey();
  const now = clock.now().getTime();
  const record: UserRecord = {
    id: randomUUID(),
    accountId: p.accountId,
    userName,
    name: input.name,
    email: input.email,
    country: input.country,
    timeZone: input.timeZone,
    description: input.description ?? null,
    message: input.message ?? null,
    disabled: input.disabled ?? false,
    disabledMessage: input.disabledMessage ?? null,
    tags: input.tags ?? {},
    privileges: input.privileges ?? ['read'],
    groupId: input.group ?? null,
    fromAt: ms(input.from),
    expiresAt: ms(input.expires),
    passwordHash: input.password ? hashPassword(input.password) : null,
    apiKeyHash: hashApiKey(apiKey),
    keyVersion: 1,
    creation: now,
    modification: now,
    lastLogin: null,
  };
  await db.transaction(async (trx) => {
    if (await users.findByUserName(trx, userName))
      throw new DomainError('USER_EXISTS', `A user named "${userName}" already exists; choose another userName.`, {
        field: 'userName',
      });
    await users.insert(trx, record);
  });
  return { user: present(record), apiKey };
}

async function visible(db: Db, p: Principal, id: string): Promise<UserRecord> {
  const u = await users.findById(db, id);
  if (!u || u.accountId !== p.accountId) throw notFound('USER_NOT_FOUND', `User "${id}"`);
  if (u.id !== p.userId && !can(p, 'admin')) throw notFound('USER_NOT_FOUND', `User "${id}"`);
  return u;
}

/**
 * The input as stored: `country` as its alpha-2 code, `group` as a group id. Clients written for
 * the platform send alpha-3 codes ("USA") and group names ("Marketing"); both are taken.
 */
async function validate(db: Db, p: Principal, input: UserInput): Promise<UserInput> {
  const country = toAlpha2(input.country);
  if (!country)
    throw new DomainError(
      'VALIDATION_FAILED',
      `country: "${input.country}" is not an ISO 3166-1 country code or name (see GET /api/users/countries).`,
      { field: 'country' },
    );
  if (!isTimeZone(input.timeZone))
    throw new DomainError(
      'VALIDATION_FAILED',
      `timeZone: "${input.timeZone}" is not an IANA time zone (see GET /api/users/timeZones).`,
      { field: 'timeZone' },
    );
  if (!input.group) return { ...input, country };
  const byId = await groups.findById(db, input.group);
  if (byId && byId.accountId === p.accountId) return { ...input, country };
  const byName = (await groups.listByAccount(db, p.accountId)).filter((g) => g.name === input.group);
  if (byName.length !== 1) {
    const why =
      byName.length > 1
        ? `several groups are named "${input.group}"; give the group's id`
        : `group "${input.group}" was not found in this account`;
    throw new DomainError('VALIDATION_FAILED', `group: ${why}.`, { field: 'group' });
  }
  return { ...input, country, group: byName[0].id };
}
