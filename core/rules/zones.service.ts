import { randomUUID } from 'node:crypto';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Principal } from '../model/user.js';
import type { Zone, ZoneType } from '../model/zone.js';
import { DomainError, notFound } from '../errors.js';
import { requirePrivilege } from '../access/access.js';
import { validateZone } from './geometry.js';
import * as zones from './zones.repository.js';
import * as rules from './alert-rules.repository.js';

/** A zone as the API takes it: a circle has `center` and `radius`, a polygon `polygon` (null and absent alike). */
export interface ZoneInput {
  name: string;
  type: ZoneType | string;
  center?: { latitude: number; longitude: number } | null;
  radius?: number | null;
  polygon?: number[][] | null;
}

/**
 * The account's zones (docs/contract.md "Alert rules and zones"): admin only, and not for a user
 * restricted to a group (zones and rules are the whole account's). Another account's zone is
 * ZONE_NOT_FOUND; a zone a rule uses cannot be deleted (ZONE_IN_USE).
 */
export interface ZonesService {
  list(p: Principal): Promise<Zone[]>;
  get(p: Principal, id: string): Promise<Zone>;
  create(p: Principal, input: ZoneInput): Promise<Zone>;
  /** Replaces the zone's name and geometry. */
  update(p: Principal, id: string, input: ZoneInput): Promise<Zone>;
  remove(p: Principal, id: string): Promise<void>;
}

export interface ZonesDeps {
  db: Db;
  clock: Clock;
  /** after every change of the account's zones (the rule engine's cache) */
  onChanged?: (accountId: string) => void;
}

/** Zones and alert rules are managed by an admin of the whole account. */
export function requireRulesAdmin(p: Principal, what: string): void {
  requirePrivilege(p, 'admin');
  if (p.groupId)
    throw new DomainError(
      'FORBIDDEN',
      `A user restricted to a group cannot manage ${what}: they apply to the whole account.`,
    );
}

/** The zone's geometry as stored: only the fields of its type; or a 400 naming the field. */
export function checkZoneInput(input: ZoneInput): Pick<Zone, 'name' | 'type' | 'center' | 'radius' | 'polygon'> {
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (!name || name.length > 200)
    throw new DomainError('VALIDATION_FAILED', 'name: must be 1 to 200 characters.', { field: 'name' });
  const problem = validateZone(input);
  if (problem)
    throw new DomainError('VALIDATION_FAILED', `${problem.field}: ${problem.message}.`, { field: problem.field });
  const type = input.type as ZoneType;
  return type === 'circle'
    ? {
        name,
        type,
        center: { latitude: input.center!.latitude, longitude: input.center!.longitude },
        radius: input.radius!,
        polygon: null,
      }
    : { name, type, center: null, radius: null, polygon: input.polygon!.map((p) => [p[0], p[1]] as [number, number]) };
}

/** A zone as the API shows it: `{id, name, type, center?, radius?, polygon?}`. */
export function presentZone(z: Zone): Record<string, unknown> {
  return {
    id: z.id,
    name: z.name,
    type: z.type,
    ...(z.center && { center: z.center }),
    ...(z.radius !== null && { radius: z.radius }),
    ...(z.polygon && { polygon: z.polygon }),
  };
}

export function createZonesService(deps: ZonesDeps): ZonesService {
  const { db, clock } = deps;

  async function own(p: Principal, id: string): Promise<Zone> {
    requireRulesAdmin(p, 'zones');
    const z = await zones.findById(db, id);
    if (!z || z.accountId !== p.accountId) throw notFound('ZONE_NOT_FOUND', `Zone "${id}"`);
    return z;
  }

  async function list(p: Principal): Promise<Zone[]> {
    requireRulesAdmin(p, 'zones');
    return zones.zonesOfAccount(db, p.accountId);
  }

  async function create(p: Principal, input: ZoneInput): Promise<Zone> {
    requireRulesAdmin(p, 'zones');
    const zone: Zone = {
      id: randomUUID(),
      accountId: p.accountId,
      ...checkZoneInput(input),
      created: clock.now().getTime(),
    };
    await zones.insert(db, zone);
    deps.onChanged?.(p.accountId);
    return zone;
  }

  async function update(p: Principal, id: string, input: ZoneInput): Promise<Zone> {
    const current = await own(p, id);
    const zone: Zone = { ...current, ...checkZoneInput(input) };
    await zones.update(db, zone);
    deps.onChanged?.(p.accountId);
    return zone;
  }

  async function remove(p: Principal, id: string): Promise<void> {
    await own(p, id);
    await db.transaction(async (trx) => {
      if (!(await zones.findForUpdate(trx, id))) return;
      const users = await rules.namesUsingZone(trx, id);
      if (users.length) {
        throw new DomainError(
          'ZONE_IN_USE',
          `Zone "${id}" is used by the alert rule${users.length > 1 ? 's' : ''} ${users.map((n) => `"${n}"`).join(', ')}; change or delete ${users.length > 1 ? 'them' : 'it'} first.`,
          { rules: users },
        );
      }
      await zones.remove(trx, id);
    });
    deps.onChanged?.(p.accountId);
  }

  return { list, get: own, create, update, remove };
}
