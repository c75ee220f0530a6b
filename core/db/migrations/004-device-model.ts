import type { Knex } from 'knex';
import { dropColumn } from './drop-column.js';

/** A device's tracker model (*ext* `model`): the gateway decodes its frames with it. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('devices', (t) => {
    t.string('model', 64);
  });
}

export async function down(knex: Knex): Promise<void> {
  await dropColumn(knex, 'devices', 'model');
}
