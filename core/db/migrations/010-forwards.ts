import type { Knex } from 'knex';

/**
 * Forwards (docs/contract.md "Forwards", core/forward/):
 * - `forwards`: an account's forward (its target and filters), where its delivery stands
 *   (`last_event_id`: the id of the last event delivered or passed over), its status, how many messages
 *   retention dropped, and its lease (the one instance delivering it);
 * - `forward_events`: the stream forwards read, written in the same transaction as the location
 *   or alert it carries, for accounts with an enabled forward only. The id is never reused (SQLite
 *   AUTOINCREMENT, a PostgreSQL sequence), so a cursor never skips an event.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('forwards', (t) => {
    t.string('id', 64).primary();
    t.string('account_id', 64).notNullable().references('accounts.id');
    t.string('name', 200).notNullable();
    t.string('type', 16).notNullable();
    t.text('url').notNullable();
    t.text('events').notNullable();
    t.string('group_id', 64);
    t.boolean('enabled').notNullable().defaultTo(true);
    t.string('topic', 500);
    t.string('exchange', 255);
    t.text('secret');
    t.bigInteger('last_event_id').notNullable().defaultTo(0);
    t.bigInteger('last_delivered_at');
    t.text('last_error');
    t.bigInteger('failing_since');
    t.bigInteger('dropped').notNullable().defaultTo(0);
    t.string('lease_holder', 64);
    t.bigInteger('lease_until').notNullable().defaultTo(0);
    t.bigInteger('created').notNullable();
    t.bigInteger('modified').notNullable();
    t.index(['account_id']);
  });
  await knex.schema.createTable('forward_events', (t) => {
    t.bigIncrements('id').primary();
    t.string('account_id', 64).notNullable();
    t.string('device_id', 64).notNullable();
    t.string('kind', 8).notNullable();
    t.text('body').notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['account_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('forward_events');
  await knex.schema.dropTableIfExists('forwards');
}
