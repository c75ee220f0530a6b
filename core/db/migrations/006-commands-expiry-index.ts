/** The background expiry sweep finds queued commands past their ttl by (status, expires_at), whatever the device. */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('commands', (t) => {
    t.index(['status', 'expires_at'], 'commands_status_expires_at_index');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('commands', (t) => {
    t.dropIndex(['status', 'expires_at'], 'commands_status_expires_at_index');
  });
}
