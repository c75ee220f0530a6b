import type { Knex } from 'knex';

/**
 * A device's travelled distance (core/locations/distance.ts): the running total in km, and the
 * state the next fix is measured from (JSON text: the newest fix time, the last counted fix, a
 * jump waiting to be confirmed). One row a device, written with the locations that change it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('device_distance', (t) => {
    t.string('device_id', 64).primary();
    t.double('total_km').notNullable();
    t.text('state').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('device_distance');
}
