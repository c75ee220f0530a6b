import type { Knex } from 'knex';
import { dropColumn } from './drop-column.js';

/** A device's decoder settings (*ext* `protocolOptions`, JSON text; null: none): the gateway decodes its frames with them. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('devices', (t) => {
    t.text('protocol_options');
  });
}

export async function down(knex: Knex): Promise<void> {
  await dropColumn(knex, 'devices', 'protocol_options');
}
