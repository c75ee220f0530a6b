/**
 * Which devices of an account hold a licence (docs/contract.md §2: making a device active needs a free
 * licence). A device holds one while it has not expired: `expiresAt` null (never) or after now.
 * The count is computed at the instant asked, so nothing has to run when a device expires.
 * Two implementations share one contract: in-process (embedded default) and Redis.
 */
export interface LicenseHolder {
  id: string;
  /** epoch ms; null: never expires */
  expiresAt: number | null;
}

export interface LicenseStore {
  /**
   * Atomically: a device that holds a licence at `nowMs` gets its new expiry and true; otherwise
   * it takes a free one (holders at `nowMs` < `total`) and true; otherwise false and nothing changes.
   * When it throws, nothing changed, even if the store carries the command out later.
   */
  claim(
    accountId: string,
    deviceId: string,
    expiresAtMs: number | null,
    total: number,
    nowMs: number,
  ): Promise<boolean>;
  /** Records an expiry without checking the total (moving expiry earlier, an expired device edited). */
  set(accountId: string, deviceId: string, expiresAtMs: number | null): Promise<void>;
  release(accountId: string, deviceId: string): Promise<void>;
  /** Devices holding a licence at `nowMs`. */
  used(accountId: string, nowMs: number): Promise<number>;
  /** Replaces the account's state (start-up rebuild from the database). */
  load(accountId: string, devices: LicenseHolder[]): Promise<void>;
}

/** A device holds a licence at `nowMs` while its expiry is later (the same rule as model/device isExpired). */
export const holdsAt = (expiresAtMs: number | null, nowMs: number): boolean =>
  expiresAtMs === null || expiresAtMs > nowMs;
