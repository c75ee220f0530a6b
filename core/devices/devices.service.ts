import type { Knex } from 'knex';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Principal } from '../model/user.js';
import { type Device, type DeviceRecord, isExpired } from '../model/device.js';
import { iso, isoRequired } from '../model/time.js';
import { DomainError, notFound } from '../errors.js';
import { requirePrivilege, visibleDevice } from '../access/access.js';
import * as devices from './devices.repository.js';
import { totalsOf } from '../locations/distance.repository.js';
import { shownKm } from '../locations/distance.js';
import * as accounts from '../accounts/accounts.repository.js';
import { hashDevicePassword } from '../secrets.js';
import type { LicenseStore } from '../licenses/license-store.js';
import { importDevices, type ImportRow, type Refusal } from './devices.import.js';

/** What an admin may write on a device (read-only fields are ignored by the API layer). */
export interface DeviceInput {
  id?: string;
  name: string;
  description?: string | null;
  min?: string | null;
  tags?: Record<string, string>;
  /** ISO 8601, or null for never */
  expires?: string | null;
  dailyEmailLimit?: number;
  dailySmsLimit?: number;
  alertEmails?: string[];
  alertPhones?: string[];
  /** the tracker's model (absent or null: none) */
  model?: string | null;
  /** decoder settings by name (absent: none) */
  protocolOptions?: Record<string, string>;
  /** write-only; absent keeps the current one, null removes it */
  mqttPassword?: string | null;
}

/** Today's sent counters per device; the notification module provides the real ones. */
export interface SentCounters {
  sentToday(devices: DeviceRecord[]): Promise<Map<string, { email: number; sms: number }>>;
}

export const noCounters: SentCounters = { sentToday: async () => new Map() };

export const DEFAULT_DAILY_LIMIT = 10;

export interface DevicesDeps {
  db: Db;
  clock: Clock;
  counters?: SentCounters;
  /** where licences are counted across instances (in-process, or Redis) */
  licenses: LicenseStore;
  /** called after a device changed (caches elsewhere, e.g. the gateway's identity cache) */
  onChange?: (deviceId: string) => void;
}

/**
 * The account's devices (docs/contract.md "Devices"). A device out of the caller's sight (another
 * account's, or outside its group) answers DEVICE_NOT_FOUND; activating one needs a free licence.
 */
export interface DevicesService {
  /** The devices the caller may see, by status (default: active, i.e. not expired). */
  list(p: Principal, status?: 'active' | 'expired' | 'all'): Promise<Device[]>;
  /** One device the caller may see. */
  get(p: Principal, id: string): Promise<Device>;
  /** Creates a device (admin only); an active one takes a licence, else NO_LICENSE_AVAILABLE. */
  create(p: Principal, input: DeviceInput & { id: string }): Promise<Device>;
  /** Replaces a device's fields (admin only); the id never changes, and reactivating takes a licence. */
  update(p: Principal, id: string, input: DeviceInput): Promise<Device>;
  /** Deletes a device (admin only) and frees its licence. */
  remove(p: Principal, id: string): Promise<void>;
  /** Creates many devices in one transaction (admin only): each row created or refused with its reason (devices.import.ts). */
  importMany(
    p: Principal,
    rows: ImportRow<DeviceInput>[],
    refused: Refusal[],
  ): Promise<{ created: string[]; refused: Refusal[] }>;
}

export function createDevicesService(deps: DevicesDeps): DevicesService {
  const { db, clock } = deps;
  const licences = licensing(deps);

  async function list(p: Principal, status: 'active' | 'expired' | 'all' = 'active'): Promise<Device[]> {
    return present(
      deps,
      await devices.list(db, { accountId: p.accountId, status, nowMs: clock.now().getTime(), groupId: p.groupId }),
    );
  }

  async function get(p: Principal, id: string): Promise<Device> {
    return (await present(deps, [await visibleDevice(db, p, id)]))[0];
  }

  async function create(p: Principal, input: DeviceInput & { id: string }): Promise<Device> {
    requirePrivilege(p, 'admin');
    const nowMs = clock.now().getTime();
    const record = newRecord(p.accountId, input, nowMs);
    const exists = () => new DomainError('DEVICE_EXISTS', `A device with id "${record.id}" already exists.`);
    if (await devices.findById(db, record.id)) throw exists();
    const active = !isExpired(record, nowMs);
    const undo = active ? await licences.claimLicense(p.accountId, record.id, record.expiresAt, nowMs) : undefined;
    await db
      .transaction(async (trx) => {
        if (await devices.findById(trx, record.id)) throw exists();
        if (active) await licences.checkLicense(trx, p.accountId, nowMs);
        // created at once by another request (another instance) since the look above
        if (!(await devices.insert(trx, record))) throw exists();
      })
      .catch(async (e: unknown) => {
        await undo?.();
        throw e;
      });
    if (!undo) await licences.recordExpiry(p.accountId, record.id, record.expiresAt);
    deps.onChange?.(record.id);
    return get(p, record.id);
  }

  async function update(p: Principal, id: string, input: DeviceInput): Promise<Device> {
    await updateDevice(deps, licences, p, id, input);
    return get(p, id);
  }

  async function remove(p: Principal, id: string): Promise<void> {
    const device = await visibleDevice(db, p, id);
    requirePrivilege(p, 'admin');
    await db.transaction(async (trx) => {
      await devices.remove(trx, id);
      // the device leaves the `devices` lists of its account's alert rules
      await devices.forgetInRules(trx, device.accountId, id);
    });
    await deps.licenses.release(device.accountId, id).catch(() => {});
    deps.onChange?.(id);
  }

  const importMany = (p: Principal, rows: ImportRow<DeviceInput>[], refused: Refusal[]) =>
    importDevices(deps, newRecord, p, rows, refused);

  return { list, get, create, update, remove, importMany };
}

/** Writes a device update (admin only); the caller reads the device back. */
async function updateDevice(
  deps: DevicesDeps,
  licences: ReturnType<typeof licensing>,
  p: Principal,
  id: string,
  input: DeviceInput,
): Promise<void> {
  const { db, clock } = deps;
  await visibleDevice(db, p, id);
  requirePrivilege(p, 'admin');
  if (input.id !== undefined && input.id !== id) {
    throw new DomainError('VALIDATION_FAILED', 'id: a device id cannot be changed; create a new device instead.', {
      field: 'id',
    });
  }
  const nowMs = clock.now().getTime();
  // Whether this update activates an expired device: decided before the transaction for the
  // licence store's claim, and again inside it, where the database check is the authority.
  const before = await devices.findById(db, id);
  const activates = (current: DeviceRecord) =>
    isExpired(current, nowMs) && !isExpired({ ...current, expiresAt: expiresMs(input, null) }, nowMs);
  const undo =
    before && activates(before)
      ? await licences.claimLicense(before.accountId, id, expiresMs(input, null), nowMs)
      : undefined;
  let claimedInStore = undo !== undefined;
  let next: DeviceRecord | undefined;
  await db
    .transaction(async (trx) => {
      const current = await devices.findById(trx, id);
      if (!current) throw notFound('DEVICE_NOT_FOUND', `Device "${id}"`);
      next = edited(current, input, nowMs);
      if (activates(current)) await licences.checkLicense(trx, current.accountId, nowMs);
      else claimedInStore = false;
      await devices.update(trx, next);
    })
    .catch(async (e: unknown) => {
      await undo?.();
      throw e;
    });
  if (!claimedInStore && next) await licences.recordExpiry(next.accountId, id, next.expiresAt);
  deps.onChange?.(id);
}

async function present(deps: DevicesDeps, records: DeviceRecord[]): Promise<Device[]> {
  const nowMs = deps.clock.now().getTime();
  const ids = records.map((r) => r.id);
  const [groups, sent, distances] = await Promise.all([
    devices.groupsOf(deps.db, ids),
    (deps.counters ?? noCounters).sentToday(records),
    totalsOf(deps.db, ids),
  ]);
  return records.map((r) => ({
    id: r.id,
    name: r.name,
    description: r.description,
    min: r.min,
    tags: r.tags,
    expires: iso(r.expiresAt),
    dailyEmailLimit: r.dailyEmailLimit,
    dailySmsLimit: r.dailySmsLimit,
    emailsSentToday: sent.get(r.id)?.email ?? 0,
    smsSentToday: sent.get(r.id)?.sms ?? 0,
    expired: isExpired(r, nowMs),
    protocol: r.protocol,
    lastConnection: iso(r.lastConnection),
    model: r.model,
    protocolOptions: r.protocolOptions,
    creation: isoRequired(r.creation),
    alertEmails: r.alertEmails,
    alertPhones: r.alertPhones,
    groups: groups.get(r.id) ?? [],
    totalDistance: shownKm(distances.get(r.id) ?? 0),
  }));
}

/**
 * A device's licence (docs/contract.md "Licences"): claimed in the licence store before a device becomes
 * active, checked again in the database, which is the authority.
 */
function licensing(deps: DevicesDeps) {
  const { db, clock } = deps;

  /**
   * Licence rule: a device becoming active needs a free licence of its account. Checked twice:
   * first in the licence store (shared by every instance, possibly Redis), before the database
   * transaction so that no Redis call ever holds a database connection; then, as the authority, in
   * the transaction under the account's row lock. Returns the undo for the store's claim, should
   * the transaction fail.
   */
  async function claimLicense(
    accountId: string,
    deviceId: string,
    expiresAt: number | null,
    nowMs: number,
  ): Promise<() => Promise<void>> {
    const account = await accounts.findById(db, accountId);
    if (!account) throw new DomainError('NOT_FOUND', 'Account was not found.');
    let claimed: boolean;
    try {
      claimed = await deps.licenses.claim(accountId, deviceId, expiresAt, account.licenses, nowMs);
    } catch (e) {
      throw new DomainError(
        'STORAGE_UNAVAILABLE',
        `Licences cannot be checked right now (${(e as Error).message}); try again shortly.`,
      );
    }
    if (!claimed) throw noLicense(account.licenses, account.licenses);
    return () => resyncLicense(accountId, deviceId);
  }

  /**
   * Undoes a claim whose transaction failed by putting the store back to what the database says:
   * the device may hold its licence all the same, activated or created at once by another request
   * (another instance) whose claim of the same device this one's shares. Releasing it outright
   * left that device uncounted in the store.
   */
  async function resyncLicense(accountId: string, deviceId: string): Promise<void> {
    try {
      const stored = await devices.findById(db, deviceId);
      if (stored && stored.accountId === accountId && !isExpired(stored, clock.now().getTime()))
        await deps.licenses.set(accountId, deviceId, stored.expiresAt);
      else await deps.licenses.release(accountId, deviceId);
    } catch {
      /* the database check stays the authority; the store is rebuilt at the next start */
    }
  }

  /** The authoritative check, inside the transaction that activates the device. */
  async function checkLicense(trx: Knex.Transaction, accountId: string, nowMs: number): Promise<void> {
    const account = await accounts.findForUpdate(trx, accountId);
    if (!account) throw new DomainError('NOT_FOUND', 'Account was not found.');
    const used = await accounts.countActiveDevices(trx, accountId, nowMs);
    if (used >= account.licenses) throw noLicense(account.licenses, used);
  }

  /** Records a change that needs no licence check (expiry moved, an expired device edited). */
  async function recordExpiry(accountId: string, deviceId: string, expiresAt: number | null): Promise<void> {
    await deps.licenses.set(accountId, deviceId, expiresAt).catch(() => {});
  }

  return { claimLicense, checkLicense, recordExpiry };
}

const noLicense = (licenses: number, used: number) =>
  new DomainError(
    'NO_LICENSE_AVAILABLE',
    `All ${licenses} licences of this account are in use; expire or delete a device first.`,
    { licenses, used },
  );

function expiresMs(input: DeviceInput, current: number | null): number | null {
  if (input.expires === undefined) return current;
  return input.expires === null ? null : new Date(input.expires).getTime();
}

/** The fields a create or a full update (PUT) sets from its input; what is left out takes its default. */
function editable(input: DeviceInput) {
  return {
    name: input.name,
    description: input.description ?? null,
    min: input.min ?? null,
    tags: input.tags ?? {},
    expiresAt: expiresMs(input, null),
    dailyEmailLimit: input.dailyEmailLimit ?? DEFAULT_DAILY_LIMIT,
    dailySmsLimit: input.dailySmsLimit ?? DEFAULT_DAILY_LIMIT,
    alertEmails: input.alertEmails ?? [],
    alertPhones: input.alertPhones ?? [],
    model: input.model ?? null,
    protocolOptions: input.protocolOptions ?? {},
  };
}

function newRecord(accountId: string, input: DeviceInput & { id: string }, nowMs: number): DeviceRecord {
  return {
    id: input.id,
    accountId,
    ...editable(input),
    protocol: null,
    lastConnection: null,
    mqttPasswordHash: input.mqttPassword ? hashDevicePassword(input.mqttPassword) : null,
    creation: nowMs,
    modification: nowMs,
  };
}

/** A full update (PUT): the password kept when left out, removed when null. */
function edited(current: DeviceRecord, input: DeviceInput, nowMs: number): DeviceRecord {
  return {
    ...current,
    ...editable(input),
    mqttPasswordHash:
      input.mqttPassword === undefined
        ? current.mqttPasswordHash
        : input.mqttPassword === null
          ? null
          : hashDevicePassword(input.mqttPassword),
    modification: nowMs,
  };
}
