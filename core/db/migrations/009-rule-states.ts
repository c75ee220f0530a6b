import type { Knex } from 'knex';

/**
 * The alert-rule engine's state (core/rules/rules.engine.ts), shared by instances:
 * - `rule_states`: per rule and device, the detector's state (JSON), a version for compare-and-set
 *   (two instances never both fire one episode), whether an episode waits for its time (`pending`,
 *   found by the tick), and when a rule's delayed command is due (`command_due`);
 * - `rule_devices`: per device, the fix time of the last position evaluated, so a late position
 *   (older than it) is never evaluated, also after a restart, and when its last position was
 *   received (Offline counts from it);
 * - `leases`: one named lease (`rules-tick`): the one instance evaluating the time passing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('rule_states', (t) => {
    t.string('rule_id', 64).notNullable();
    t.string('device_id', 64).notNullable();
    t.text('state').notNullable();
    t.integer('version').notNullable().defaultTo(0);
    t.boolean('pending').notNullable().defaultTo(false);
    t.bigInteger('command_due');
    t.bigInteger('updated_at').notNullable();
    t.primary(['rule_id', 'device_id']);
    t.index(['device_id']);
    t.index(['pending']);
    t.index(['command_due']);
  });
  await knex.schema.createTable('rule_devices', (t) => {
    t.string('device_id', 64).primary();
    t.bigInteger('last_fix').notNullable();
    t.bigInteger('last_report').notNullable();
  });
  await knex.schema.createTable('leases', (t) => {
    t.string('name', 64).primary();
    t.string('holder', 64).notNullable();
    t.bigInteger('until').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('leases');
  await knex.schema.dropTableIfExists('rule_devices');
  await knex.schema.dropTableIfExists('rule_states');
}
