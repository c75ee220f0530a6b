import type { Knex } from 'knex';

/**
 * The notification outbox: one row per message to send, written in the alert's own transaction,
 * so nothing is lost across restarts; a lease lets several instances share the work without
 * sending a message twice.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('outbox', (t) => {
    t.increments('id').primary();
    t.integer('alert_id').notNullable();
    t.string('device_id', 64).notNullable();
    t.string('channel', 8).notNullable();
    t.string('recipient', 320).notNullable();
    t.text('subject');
    t.text('body').notNullable();
    t.text('html');
    t.string('alert_name', 64).notNullable();
    /** the daily counter this message holds a place in; null while not yet counted (store down) */
    t.string('quota_key', 200);
    t.integer('quota_limit');
    t.bigInteger('quota_expires_at');
    t.string('status', 12).notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.bigInteger('next_attempt_at').notNullable();
    t.bigInteger('lease_until');
    t.text('last_error');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('sent_at');
    t.unique(['alert_id', 'channel', 'recipient']);
    t.index(['status', 'next_attempt_at']);
    t.index(['device_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('outbox');
}
