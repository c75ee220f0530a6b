/** In-process licence holders (embedded default). One event loop makes each call atomic. */
import { holdsAt, type LicenseStore } from './license-store.js';

export function createMemoryLicenseStore(): LicenseStore {
  const accounts = new Map<string, Map<string, number | null>>();
  const devicesOf = (accountId: string): Map<string, number | null> => {
    let devices = accounts.get(accountId);
    if (!devices) accounts.set(accountId, (devices = new Map()));
    return devices;
  };
  const countAt = (devices: Map<string, number | null>, nowMs: number): number => {
    let n = 0;
    for (const expiresAt of devices.values()) if (holdsAt(expiresAt, nowMs)) n++;
    return n;
  };

  return {
    async claim(accountId, deviceId, expiresAtMs, total, nowMs) {
      const devices = devicesOf(accountId);
      const current = devices.get(deviceId);
      const holds = current !== undefined && holdsAt(current, nowMs);
      if (!holds && countAt(devices, nowMs) >= total) return false;
      devices.set(deviceId, expiresAtMs);
      return true;
    },
    async set(accountId, deviceId, expiresAtMs) {
      devicesOf(accountId).set(deviceId, expiresAtMs);
    },
    async release(accountId, deviceId) {
      accounts.get(accountId)?.delete(deviceId);
    },
    async used(accountId, nowMs) {
      const devices = accounts.get(accountId);
      return devices ? countAt(devices, nowMs) : 0;
    },
    async load(accountId, devices) {
      accounts.set(accountId, new Map(devices.map((d) => [d.id, d.expiresAt])));
    },
  };
}
