import type { Knex } from 'knex';

/**
 * Zones and alert rules of an account (docs/contract.md "Alert rules and zones", issue 14). A zone is a
 * circle (centre and radius in metres) or a polygon (a closed ring of [longitude, latitude] pairs,
 * JSON text). A rule's `params`, `devices`, `schedule` and `command` are JSON text; the zone and the
 * group it names are columns too, so "is this zone / group in use" is one indexed query.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('zones', (t) => {
    t.string('id', 64).primary();
    t.string('account_id', 64).notNullable();
    t.string('name', 200).notNullable();
    t.string('type', 8).notNullable();
    t.double('center_latitude');
    t.double('center_longitude');
    t.double('radius');
    t.text('polygon');
    t.bigInteger('created').notNullable();
    t.index(['account_id', 'created']);
  });
  await knex.schema.createTable('alert_rules', (t) => {
    t.string('id', 64).primary();
    t.string('account_id', 64).notNullable();
    t.string('name', 200).notNullable();
    t.string('alert_name', 64).notNullable();
    t.text('devices');
    t.string('group_id', 64);
    t.boolean('enabled').notNullable().defaultTo(true);
    t.text('params').notNullable();
    t.string('zone_id', 64);
    t.integer('min_duration_seconds').notNullable().defaultTo(0);
    t.text('schedule');
    t.boolean('notify_email').notNullable().defaultTo(false);
    t.boolean('notify_sms').notNullable().defaultTo(false);
    t.text('command');
    t.bigInteger('created').notNullable();
    t.index(['account_id', 'created']);
    t.index(['zone_id']);
    t.index(['group_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('alert_rules');
  await knex.schema.dropTableIfExists('zones');
}
