/**
 * Many devices at once (POST /api/devices/import, docs/rest.md "Importing devices"): every row the
 * API found valid is checked against the account (an id taken, twice in the file, a group not its
 * own) and its licences, then the accepted rows are written in one transaction. A row refused says
 * why; the others are created all the same.
 */
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Principal } from '../model/user.js';
import { isExpired, type DeviceRecord } from '../model/device.js';
import type { ErrorCode } from '../errors.js';
import { DomainError } from '../errors.js';
import { requirePrivilege } from '../access/access.js';
import type { LicenseStore } from '../licenses/license-store.js';
import * as devices from './devices.repository.js';
import * as accounts from '../accounts/accounts.repository.js';
import * as groups from '../groups/groups.repository.js';

/** A row as the API validated it: its place in the file (1 = the first data row), the device, its groups. */
export interface ImportRow<I> {
  row: number;
  input: I & { id: string };
  groups: string[];
}

export interface Refusal {
  row: number;
  id: string | null;
  code: ErrorCode;
  error: string;
}

export interface ImportDeps {
  db: Db;
  clock: Clock;
  licenses: LicenseStore;
  onChange?: (deviceId: string) => void;
}

/** How a row becomes a record: the devices service's own (the same defaults as POST /api/devices). */
export type RecordOf<I> = (accountId: string, input: I & { id: string }, nowMs: number) => DeviceRecord;

/**
 * Imports `rows` for the caller's account (admin only); rows refused before (by the API's
 * validation) are passed in `refused` and answered in row order with the rest.
 */
export async function importDevices<I>(
  deps: ImportDeps,
  toRecord: RecordOf<I>,
  p: Principal,
  rows: ImportRow<I>[],
  refused: Refusal[],
): Promise<{ created: string[]; refused: Refusal[] }> {
  requirePrivilege(p, 'admin');
  const { db } = deps;
  const nowMs = deps.clock.now().getTime();
  const refuse = (r: ImportRow<I>, code: ErrorCode, error: string) =>
    refused.push({ row: r.row, id: r.input.id, code, error });
  const candidates = await checkAgainstAccount(db, p, rows, refuse);
  const records = candidates.map((r) => ({ row: r, record: toRecord(p.accountId, r.input, nowMs) }));
  const account = await accounts.findById(db, p.accountId);
  if (!account) throw new DomainError('NOT_FOUND', 'Account was not found.');
  // the licence store first (shared by every instance), outside the transaction as for one device
  const claimed: string[] = [];
  const accepted: typeof records = [];
  for (const c of records) {
    if (isExpired(c.record, nowMs)) {
      accepted.push(c);
      continue;
    }
    if (await deps.licenses.claim(p.accountId, c.record.id, c.record.expiresAt, account.licenses, nowMs)) {
      claimed.push(c.record.id);
      accepted.push(c);
    } else refuse(c.row, 'NO_LICENSE_AVAILABLE', noLicenseText(account.licenses));
  }
  let created: typeof records = [];
  try {
    created = await db.transaction(async (trx) => {
      // the authority: the account's row locked, its active devices counted
      const locked = await accounts.findForUpdate(trx, p.accountId);
      if (!locked) throw new DomainError('NOT_FOUND', 'Account was not found.');
      let free = locked.licenses - (await accounts.countActiveDevices(trx, p.accountId, nowMs));
      // created meanwhile by another request (another instance)
      const taken = await devices.existingIds(
        trx,
        accepted.map((c) => c.record.id),
      );
      const out: typeof records = [];
      for (const c of accepted) {
        if (taken.has(c.record.id)) {
          refuse(c.row, 'DEVICE_EXISTS', `A device with id "${c.record.id}" already exists.`);
          continue;
        }
        if (!isExpired(c.record, nowMs)) {
          if (free <= 0) {
            refuse(c.row, 'NO_LICENSE_AVAILABLE', noLicenseText(locked.licenses));
            continue;
          }
          free--;
        }
        out.push(c);
      }
      const inserted = await devices.insertAll(
        trx,
        out.map((c) => c.record),
        out.flatMap((c) => c.row.groups.map((groupId) => ({ groupId, deviceId: c.record.id }))),
      );
      for (const c of out)
        if (!inserted.has(c.record.id))
          refuse(c.row, 'DEVICE_EXISTS', `A device with id "${c.record.id}" already exists.`);
      return out.filter((c) => inserted.has(c.record.id));
    });
  } finally {
    await syncLicenses(deps, p.accountId, claimed, new Set(created.map((c) => c.record.id)), nowMs);
  }
  for (const c of created)
    if (isExpired(c.record, nowMs))
      await deps.licenses.set(p.accountId, c.record.id, c.record.expiresAt).catch(() => {});
  for (const c of created) deps.onChange?.(c.record.id);
  refused.sort((a, b) => a.row - b.row);
  return { created: created.map((c) => c.record.id), refused };
}

/** The rows that name no device taken, appear once in the file and name only groups of the caller's account. */
async function checkAgainstAccount<I>(
  db: Db,
  p: Principal,
  rows: ImportRow<I>[],
  refuse: (r: ImportRow<I>, code: ErrorCode, error: string) => void,
): Promise<ImportRow<I>[]> {
  const own = new Set(
    (await groups.listByAccount(db, p.accountId)).filter((g) => !p.groupId || g.id === p.groupId).map((g) => g.id),
  );
  const existing = await devices.existingIds(
    db,
    rows.map((r) => r.input.id),
  );
  const firstRow = new Map<string, number>();
  const out: ImportRow<I>[] = [];
  for (const r of rows) {
    const id = r.input.id;
    const earlier = firstRow.get(id);
    if (earlier !== undefined) {
      refuse(r, 'DEVICE_EXISTS', `Device id "${id}" appears already in row ${earlier} of this import.`);
      continue;
    }
    firstRow.set(id, r.row);
    if (existing.has(id)) {
      refuse(r, 'DEVICE_EXISTS', `A device with id "${id}" already exists.`);
      continue;
    }
    const unknown = r.groups.find((g) => !own.has(g));
    if (unknown !== undefined) {
      refuse(r, 'GROUP_NOT_FOUND', `Group "${unknown}" was not found.`);
      continue;
    }
    r.groups = [...new Set(r.groups)];
    out.push(r);
  }
  return out;
}

/** The licence store put back to what the database holds for the claimed devices that were not created. */
async function syncLicenses(
  deps: ImportDeps,
  accountId: string,
  claimed: string[],
  created: Set<string>,
  nowMs: number,
): Promise<void> {
  for (const id of claimed) {
    if (created.has(id)) continue;
    try {
      const stored = await devices.findById(deps.db, id);
      if (stored && stored.accountId === accountId && !isExpired(stored, nowMs))
        await deps.licenses.set(accountId, id, stored.expiresAt);
      else await deps.licenses.release(accountId, id);
    } catch {
      /* the database check stays the authority; the store is rebuilt at the next start */
    }
  }
}

const noLicenseText = (licenses: number) =>
  `All ${licenses} licences of this account are in use; this row would need one more.`;
