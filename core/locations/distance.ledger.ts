/**
 * Distance in the group commit (core/ingest/group-commit.ts): before a batch's rows are written,
 * each gets `totalDistance`, the km its device travelled up to that fix (distance.ts), and the
 * devices' states are saved in the same transaction, so a total survives restarts and is never
 * counted twice for rows that did not commit.
 */
import type { Knex } from 'knex';
import { storedJson } from '../model/location.js';
import { SerialisedRow, type LocationRow } from './locations.repository.js';
import { advance, legKm, shownKm, type DistanceState, type Fix } from './distance.js';
import * as repo from './distance.repository.js';

function fixOf(r: LocationRow): Fix {
  // a row a gateway process prepared carries these values: its location is not parsed for them
  const l = r instanceof SerialisedRow ? r.fix : r.location;
  return { dateTime: r.dateTime, latitude: l.latitude, longitude: l.longitude, speedKmh: l.speed, valid: l.valid };
}

/** Gives the row its total; `jsonWithoutTotal` keeps its JSON before, for a batch written again (in halves). */
function setTotal(r: LocationRow & { jsonWithoutTotal?: string }, km: number): void {
  const shown = shownKm(km);
  const base = (r.jsonWithoutTotal ??= r.json ?? storedJson(r.location));
  // the stored text ends with its object's brace: the total is its last field
  r.json = `${base.slice(0, -1)},"totalDistance":${shown}}`;
  if (r instanceof SerialisedRow) r.setTotalDistance(shown);
  else r.location.totalDistance = shown;
}

/**
 * Gives every row its total, in the order given (a device's rows as they arrived), and saves the
 * states. Returns the rows not newer than their device's newest fix (late fixes, resends and
 * corrections), which the reports' cache must hear of (fix-marks.repository.ts).
 */
export async function addDistances(trx: Knex.Transaction, rows: readonly LocationRow[]): Promise<LocationRow[]> {
  const late: LocationRow[] = [];
  if (rows.length === 0) return late;
  const ids = [...new Set(rows.map((r) => r.deviceId))];
  const states = await repo.statesOf(trx, ids);
  const changed = new Map<string, DistanceState>();
  for (const r of rows) {
    const fix = fixOf(r);
    const state = changed.get(r.deviceId) ?? states.get(r.deviceId);
    if (!state || fix.dateTime > state.lastTime) {
      const next = advance(state, fix);
      changed.set(r.deviceId, next);
      setTotal(r, next.totalKm);
    } else if (fix.dateTime === state.lastTime) {
      // the newest fix again (a resend or a correction): the total stands
      setTotal(r, state.totalKm);
      late.push(r);
    } else {
      setTotal(r, await lateTotal(trx, r.deviceId, fix, state.totalKm));
      late.push(r);
    }
  }
  await repo.saveStates(trx, changed);
  return late;
}

/**
 * A late fix: the total of the stored fix before it plus its own leg, at most the running total;
 * the running total is not changed (counting the way back to it would add the same road twice).
 */
async function lateTotal(trx: Knex.Transaction, deviceId: string, fix: Fix, runningKm: number): Promise<number> {
  const before = await repo.fixBefore(trx, deviceId, fix.dateTime);
  if (!before) return 0;
  const leg = fix.valid === false || before.fix.valid === false ? 0 : (legKm(before.fix, fix) ?? 0);
  return Math.min(runningKm, before.totalKm + leg);
}
