/**
 * The distance ledger on rows a gateway process prepared (core/locations/distance.ledger.ts): the
 * total is measured from the values the checks took out and written into the stored text, without
 * parsing the location; a location read afterwards shows the same total.
 */
import test from 'ava';
import { closeDb, migrate, openDb } from '../../../core/db/db.js';
import { addDistances } from '../../../core/locations/distance.ledger.js';
import { SerialisedRow } from '../../../core/locations/locations.repository.js';
import type { Location } from '../../../core/model/location.js';

const T0 = Date.UTC(2026, 5, 1, 8);

/** counts the times its location is read (parsed) */
class CountingRow extends SerialisedRow {
  reads = 0;
  override get location(): Location {
    this.reads++;
    return super.location;
  }
}

const row = (s: number, latitude: number): CountingRow => {
  const l = { dateTime: new Date(T0 + s * 1000).toISOString(), latitude, longitude: -3, speed: 40, valid: true };
  return new CountingRow('dev-1', T0 + s * 1000, T0 + s * 1000, JSON.stringify(l), {
    latitude,
    longitude: -3,
    speed: 40,
    valid: true,
  });
};

test('distance ledger: prepared rows get their totals in the stored text, and no location is parsed for it', async (t) => {
  const db = openDb({ sqliteFile: ':memory:' });
  t.teardown(() => closeDb(db));
  await migrate(db);
  // 0.001 degree of latitude (111 m) apart, 10 s apart: 40 km/h
  const rows = [row(0, 40), row(10, 40.001), row(20, 40.002)];
  await db.transaction((trx) => addDistances(trx, rows));
  t.deepEqual(
    rows.map((r) => r.reads),
    [0, 0, 0],
  );
  const totals = rows.map((r) => (JSON.parse(r.json) as Location).totalDistance);
  t.deepEqual(totals, [0, 0.111, 0.222]);
  // read afterwards (a rule, the live feed): the total is there
  t.is(rows[2].location.totalDistance, 0.222);
  // written again (a batch retried in halves): the total is added once, not twice
  await db.transaction((trx) => addDistances(trx, [row(30, 40.003)]));
  const again = row(40, 40.004);
  await db.transaction(async (trx) => {
    await addDistances(trx, [again]);
    await addDistances(trx, [again]);
  });
  t.is((again.json.match(/totalDistance/g) ?? []).length, 1);
});
