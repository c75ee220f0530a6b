import type { Knex } from 'knex';
import { dropColumn } from './drop-column.js';

/**
 * An account's retention (`trackgate account update --retention-days N`, docs/operations.md
 * "Retention"): null follows TRACKGATE_RETENTION_DAYS, 0 keeps everything, N keeps N days of
 * locations and alerts.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('accounts', (t) => {
    t.integer('retention_days');
  });
}

export async function down(knex: Knex): Promise<void> {
  await dropColumn(knex, 'accounts', 'retention_days');
}
