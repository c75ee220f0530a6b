/**
 * What the rule engine reads of the rules, from the database: an account's enabled rules and its
 * zones compiled for testing positions (core/rules/geometry.ts), the accounts with rules, the
 * devices of a group, and an account's time zone.
 */
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { RuleSource } from './rules.engine.js';
import type { ZoneTest } from './rule-detectors.js';
import { accountsWithEnabledRules, listEnabledRules } from './alert-rules.repository.js';
import { zonesOfAccount } from './zones.repository.js';
import { compileZone } from './geometry.js';
import { devicesOf } from '../groups/groups.repository.js';
import { findById as findAccount } from '../accounts/accounts.repository.js';

export function createRuleSource(db: Db): RuleSource {
  return {
    async load(accountId) {
      const rules = await listEnabledRules(db, accountId);
      const zones = new Map<string, ZoneTest>();
      if (rules.some((r) => r.params.zone)) {
        for (const z of await zonesOfAccount(db, accountId)) {
          const compiled = compileZone(z);
          zones.set(z.id, { name: z.name, contains: compiled.contains });
        }
      }
      return { rules, zones };
    },
    accounts: () => accountsWithEnabledRules(db),
    async groupDevices(groupId) {
      return (await devicesOf(db, [groupId])).get(groupId) ?? [];
    },
  };
}

/** An account's time zone, remembered for a minute. */
export function timeZones(db: Db, clock: Clock): (accountId: string) => Promise<string> {
  const cache = new Map<string, { at: number; zone: string }>();
  return async (accountId) => {
    const now = clock.now().getTime();
    const hit = cache.get(accountId);
    if (hit && now - hit.at < 60_000) return hit.zone;
    const zone = (await findAccount(db, accountId))?.timeZone ?? 'UTC';
    cache.set(accountId, { at: now, zone });
    return zone;
  };
}
