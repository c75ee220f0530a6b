import type { Knex } from 'knex';

/** Identifiers of trackers that tried to connect but are not (or no longer) devices. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('unknown_devices', (t) => {
    t.string('identifier', 64).notNullable();
    t.string('protocol', 40).notNullable();
    t.string('reason', 20).notNullable();
    t.string('remote_address', 80);
    t.bigInteger('first_seen').notNullable();
    t.bigInteger('last_seen').notNullable();
    t.bigInteger('attempts').notNullable().defaultTo(0);
    t.primary(['identifier', 'protocol']);
    t.index(['last_seen']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('unknown_devices');
}
