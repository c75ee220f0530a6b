import type { Knex } from 'knex';

/**
 * A device's log (*ext* `GET /api/devices/{deviceId}/log`): what a device said that belongs to no
 * stored report, kept rather than dropped. Today one type: `unsolicitedReply`, a reply to a
 * command that matches no command sent to it (docs/contract.md "Commands"). The newest entries per
 * device are kept (DEVICE_LOG_KEEP), older ones pruned as new ones come.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('device_log', (t) => {
    t.increments('id').primary();
    t.string('device_id', 64).notNullable();
    t.string('account_id', 64).notNullable();
    t.bigInteger('at').notNullable();
    t.string('type', 32).notNullable();
    t.string('protocol', 32).notNullable();
    t.text('text').notNullable();
    t.text('detail');
    t.index(['device_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('device_log');
}
