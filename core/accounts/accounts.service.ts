import { randomUUID } from 'node:crypto';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import { DomainError } from '../errors.js';
import type { Account } from '../model/account.js';
import type { UserRecord } from '../model/user.js';
import { isTimeZone } from '../reference/reference-data.js';
import * as accounts from './accounts.repository.js';
import * as users from '../users/users.repository.js';
import { apiKeyMatches, generateApiKey, hashApiKey } from '../secrets.js';
import { API_KEY_MAX } from '../auth/tokens.service.js';

export interface CreateAccountInput {
  name: string;
  licenses: number;
  adminUser: string;
  adminApiKey?: string;
  timeZone?: string;
  adminEmail?: string;
  country?: string;
}

export interface CreatedAccount {
  accountId: string;
  userId: string;
  userName: string;
  apiKey: string;
}

export interface LicenseUsage {
  total: number;
  used: number;
  free: number;
}

export interface UpdateAccountInput {
  name?: string;
  licenses?: number;
  timeZone?: string;
  /** days of locations and alerts kept; 0 keeps everything, null follows TRACKGATE_RETENTION_DAYS */
  retentionDays?: number | null;
}

/** The longest retention an account may have, in days (100 years; TRACKGATE_RETENTION_DAYS has the same bound). */
export const RETENTION_DAYS_MAX = 36_500;

export interface OperatorAccountView {
  id: string;
  name: string;
  licenses: number;
  timeZone: string;
  /** devices holding a licence now */
  licensesUsed: number;
  creation: string;
  /** days of locations and alerts kept: null follows TRACKGATE_RETENTION_DAYS, 0 keeps everything */
  retentionDays: number | null;
}

const operatorView = (a: Account, used: number): OperatorAccountView => ({
  id: a.id,
  name: a.name,
  licenses: a.licenses,
  timeZone: a.timeZone,
  licensesUsed: used,
  creation: new Date(a.createdAt).toISOString(),
  retentionDays: a.retentionDays ?? null,
});

/** Accounts: the operator's (command line, first start) and an account's own view of itself. */
export interface AccountsService {
  /** Creates an account with its admin user (`trackgate account create`). */
  create(input: CreateAccountInput): Promise<CreatedAccount>;
  /** First start: creates the first account unless one exists; a configured admin key replaces the stored one. */
  bootstrap(input: CreateAccountInput): Promise<CreatedAccount | undefined>;
  /** The account's licences: total, held by active devices, free. */
  licenseUsage(accountId: string): Promise<LicenseUsage>;
  /** The account as its own users see it. */
  get(accountId: string): Promise<{ id: string; name: string; timeZone: string; licenses: LicenseUsage }>;
  /** Sets the zone in which the account's day (daily limits) starts at midnight. */
  setTimeZone(accountId: string, timeZone: string): Promise<void>;
  /** What the operator sees of every account (`trackgate account list`). */
  list(): Promise<OperatorAccountView[]>;
  /** The operator changes an account (`trackgate account update`), licences included. */
  update(accountId: string, input: UpdateAccountInput): Promise<OperatorAccountView>;
}

export interface AccountsHooks {
  /** called after an account was created (its licence state starts empty) */
  onCreated?: (accountId: string) => Promise<void>;
}

/**
 * The most licences an account may have, as TRACKGATE_LICENSES allows: more would not fit
 * PostgreSQL's integer column (2,147,483,647), and SQLite kept 1e23 as a float.
 */
export const MAX_LICENSES = 10_000_000;

/** Shortest admin API key an operator may choose: the rule of TRACKGATE_ADMIN_API_KEY (config.ts). */
export const ADMIN_API_KEY_MIN = 16;

/**
 * Why a chosen admin API key (`trackgate account create --admin-api-key`) cannot be taken, or
 * undefined. It is the only secret of a new account, so it is held to TRACKGATE_ADMIN_API_KEY's
 * rule; longer than the token endpoint takes, or with blanks at an end (which a shell or a form
 * drops), nobody could log in with it.
 */
export function adminApiKeyProblem(key: string): string | undefined {
  if (key.length < ADMIN_API_KEY_MIN) return `must be at least ${ADMIN_API_KEY_MIN} characters (it has ${key.length})`;
  if (key.length > API_KEY_MAX) return `may have at most ${API_KEY_MAX} characters`;
  if (key.trim() !== key) return 'must not begin or end with a blank';
  return undefined;
}

const licensesOk = (n: number): boolean => Number.isInteger(n) && n >= 0 && n <= MAX_LICENSES;
const LICENSES_RANGE = `licenses must be a whole number from 0 to ${MAX_LICENSES.toLocaleString('en')}.`;

export function createAccountsService(db: Db, clock: Clock, hooks: AccountsHooks = {}): AccountsService {
  const create = (input: CreateAccountInput) => createAccount(db, clock, hooks, input);

  /**
   * First start: with no account yet, create one with its admin. Returns the created account, or
   * undefined when the database already had one. If an admin key is configured and the admin
   * exists with another key, the configured key replaces it (the environment is the operator's word).
   */
  async function bootstrap(input: CreateAccountInput): Promise<CreatedAccount | undefined> {
    if ((await accounts.count(db)) > 0) {
      if (input.adminApiKey) {
        const admin = await users.findByUserName(db, input.adminUser);
        if (admin && !apiKeyMatches(input.adminApiKey, admin.apiKeyHash)) {
          await users.update(db, {
            ...admin,
            apiKeyHash: hashApiKey(input.adminApiKey),
            keyVersion: admin.keyVersion + 1,
            modification: clock.now().getTime(),
          });
        }
      }
      return undefined;
    }
    return create(input);
  }

  async function licenseUsage(accountId: string): Promise<LicenseUsage> {
    const account = await accounts.findById(db, accountId);
    if (!account) throw new DomainError('NOT_FOUND', 'Account was not found.');
    const used = await accounts.countActiveDevices(db, accountId, clock.now().getTime());
    return { total: account.licenses, used, free: Math.max(0, account.licenses - used) };
  }

  async function get(
    accountId: string,
  ): Promise<{ id: string; name: string; timeZone: string; licenses: LicenseUsage }> {
    const account = await accounts.findById(db, accountId);
    if (!account) throw new DomainError('NOT_FOUND', 'Account was not found.');
    return { id: account.id, name: account.name, timeZone: account.timeZone, licenses: await licenseUsage(accountId) };
  }

  /** The account's day (daily limits) starts at midnight in this zone. */
  async function setTimeZone(accountId: string, timeZone: string): Promise<void> {
    if (!isTimeZone(timeZone))
      throw new DomainError(
        'VALIDATION_FAILED',
        `timeZone: "${timeZone}" is not an IANA time zone (see GET /api/users/timeZones).`,
        { field: 'timeZone' },
      );
    await accounts.setTimeZone(db, accountId, timeZone);
  }

  /** What the operator sees of every account (`trackgate account list`). */
  async function list(): Promise<OperatorAccountView[]> {
    const nowMs = clock.now().getTime();
    const all = await accounts.list(db);
    return Promise.all(all.map(async (a) => operatorView(a, await accounts.countActiveDevices(db, a.id, nowMs))));
  }

  const update = (accountId: string, input: UpdateAccountInput) => updateAccount(db, clock, accountId, input);

  return { create, bootstrap, licenseUsage, get, setTimeZone, list, update };
}

/**
 * The operator changes an account (`trackgate account update`): licences are the operator's to
 * set, never an account admin's. Fewer licences than active devices is allowed: those devices
 * keep working, and no device becomes active again until the count is below the new total.
 */
async function updateAccount(
  db: Db,
  clock: Clock,
  accountId: string,
  input: UpdateAccountInput,
): Promise<OperatorAccountView> {
  checkUpdate(input);
  await db.transaction(async (trx) => {
    if (!(await accounts.findForUpdate(trx, accountId)))
      throw new DomainError('NOT_FOUND', `There is no account ${accountId}; see trackgate account list.`);
    await accounts.update(trx, accountId, input);
  });
  const account = (await accounts.findById(db, accountId))!;
  return operatorView(account, await accounts.countActiveDevices(db, accountId, clock.now().getTime()));
}

async function createAccount(
  db: Db,
  clock: Clock,
  hooks: AccountsHooks,
  input: CreateAccountInput,
): Promise<CreatedAccount> {
  const timeZone = input.timeZone ?? 'UTC';
  checkCreate(input, timeZone);
  const apiKey = input.adminApiKey ?? generateApiKey();
  const now = clock.now().getTime();
  const accountId = randomUUID();
  const userId = randomUUID();
  await db.transaction(async (trx) => {
    if (await users.findByUserName(trx, input.adminUser)) {
      throw new DomainError('USER_EXISTS', `A user named "${input.adminUser}" already exists.`);
    }
    await accounts.insert(trx, {
      id: accountId,
      name: input.name,
      licenses: input.licenses,
      timeZone,
      createdAt: now,
    });
    await users.insert(trx, adminRecord(input, { userId, accountId, timeZone, apiKey, now }));
  });
  await hooks.onCreated?.(accountId);
  return { accountId, userId, userName: input.adminUser, apiKey };
}

function checkCreate(input: CreateAccountInput, timeZone: string): void {
  if (!isTimeZone(timeZone))
    throw new DomainError('VALIDATION_FAILED', `timeZone "${timeZone}" is not an IANA time zone.`);
  if (!input.adminUser.trim()) throw new DomainError('VALIDATION_FAILED', 'The admin user name must not be empty.');
  if (!input.name.trim())
    throw new DomainError('VALIDATION_FAILED', 'The account name must not be empty.', { field: 'name' });
  if (!licensesOk(input.licenses)) throw new DomainError('VALIDATION_FAILED', LICENSES_RANGE, { field: 'licenses' });
  const keyProblem = input.adminApiKey === undefined ? undefined : adminApiKeyProblem(input.adminApiKey);
  if (keyProblem)
    throw new DomainError('VALIDATION_FAILED', `The admin API key ${keyProblem}; leave it out to have one generated.`, {
      field: 'adminApiKey',
    });
}

function checkUpdate(input: UpdateAccountInput): void {
  if (input.licenses !== undefined && !licensesOk(input.licenses))
    throw new DomainError('VALIDATION_FAILED', LICENSES_RANGE, { field: 'licenses' });
  if (input.name !== undefined && !input.name.trim())
    throw new DomainError('VALIDATION_FAILED', 'The account name must not be empty.', { field: 'name' });
  if (input.timeZone !== undefined && !isTimeZone(input.timeZone))
    throw new DomainError('VALIDATION_FAILED', `timeZone "${input.timeZone}" is not an IANA time zone.`, {
      field: 'timeZone',
    });
  const days = input.retentionDays;
  if (days !== undefined && days !== null && !(Number.isInteger(days) && days >= 0 && days <= RETENTION_DAYS_MAX))
    throw new DomainError(
      'VALIDATION_FAILED',
      `retentionDays must be a whole number of days from 0 (keep everything) to ${RETENTION_DAYS_MAX}.`,
      { field: 'retentionDays' },
    );
}

/** A new account's first user: its admin, with every privilege but `execute`, known by its API key. */
function adminRecord(
  input: CreateAccountInput,
  ids: { userId: string; accountId: string; timeZone: string; apiKey: string; now: number },
): UserRecord {
  const { userId, accountId, timeZone, apiKey, now } = ids;
  return {
    id: userId,
    accountId,
    userName: input.adminUser,
    name: input.adminUser,
    email: input.adminEmail ?? (input.adminUser.includes('@') ? input.adminUser : `${input.adminUser}@localhost`),
    country: input.country ?? 'US',
    timeZone,
    description: null,
    message: null,
    disabled: false,
    disabledMessage: null,
    tags: {},
    privileges: ['admin', 'write', 'read'],
    groupId: null,
    fromAt: null,
    expiresAt: null,
    passwordHash: null,
    apiKeyHash: hashApiKey(apiKey),
    keyVersion: 1,
    creation: now,
    modification: now,
    lastLogin: null,
  };
}
