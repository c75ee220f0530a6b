import type { Knex } from 'knex';

/**
 * Commands to devices (docs/contract.md "Commands"): queued durably until the device identifies itself,
 * then sent, answered, expired, failed or cancelled. `match` is what the device's reply echoes
 * (JSON of the encoder's CommandMatch), so an answer is tied back to its command.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('commands', (t) => {
    t.increments('id').primary();
    t.string('device_id', 64).notNullable();
    t.string('account_id', 64).notNullable();
    t.text('command').notNullable();
    t.string('format', 8).notNullable();
    t.boolean('sms').notNullable().defaultTo(false);
    t.string('status', 12).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('sent_at');
    t.bigInteger('answered_at');
    t.bigInteger('expires_at').notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.text('result');
    t.text('match');
    t.index(['device_id', 'status', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('commands');
}
