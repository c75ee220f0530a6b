import type { Knex } from 'knex';
import { dropColumn } from './drop-column.js';

/**
 * Trip and stop reports (docs/rest.md "Trips, stops and summary"):
 * - `accounts.report_settings`: the account's detection settings as JSON (null: the defaults);
 * - `report_days`: a device's day (in the account's time zone, [day_start_ms, day_end_ms)) as
 *   runs (core/reports/day-runs.ts), with what it was computed from: the settings and zone
 *   (`params`), the first and last fix time read, and the change marks counted then (`marks`);
 * - `report_marks`: per device and quarter hour of fix time, how many late or corrected fixes were
 *   stored there (the group commit counts them): a cached day whose marks changed is computed again.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('accounts', (t) => {
    t.text('report_settings');
  });
  await knex.schema.createTable('report_days', (t) => {
    t.string('device_id', 64).notNullable();
    t.bigInteger('day_start_ms').notNullable();
    t.bigInteger('day_end_ms').notNullable();
    t.text('params').notNullable();
    t.bigInteger('first_ms').notNullable();
    t.bigInteger('last_ms').notNullable();
    t.bigInteger('marks').notNullable();
    t.text('data').notNullable();
    t.primary(['device_id', 'day_start_ms']);
  });
  await knex.schema.createTable('report_marks', (t) => {
    t.string('device_id', 64).notNullable();
    t.bigInteger('bucket_ms').notNullable();
    t.bigInteger('n').notNullable();
    t.primary(['device_id', 'bucket_ms']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('report_marks');
  await knex.schema.dropTableIfExists('report_days');
  await dropColumn(knex, 'accounts', 'report_settings');
}
