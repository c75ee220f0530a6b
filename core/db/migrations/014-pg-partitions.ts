import type { Knex } from 'knex';
import { convertToPartitioned, convertToPlain } from '../partitions/pg-partitions.repository.js';

/**
 * PostgreSQL only (SQLite keeps its plain tables): locations and alerts become range-partitioned
 * by fix time (`date_time`), each with a DEFAULT partition; their partitions are made by the
 * maintenance (core/db/partitions/pg-partitions.ts). Rows already stored stay where they are: the
 * old table is attached as the partition `<table>_legacy` of its min..max fix times (dropped whole
 * once retention passes its max). The alerts' key becomes (id, date_time): a partitioned table's
 * unique keys must hold the partition key; ids still come from one sequence.
 */
export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client !== 'pg') return;
  await knex.transaction(async (trx) => {
    await convertToPartitioned(trx, 'locations');
    await convertToPartitioned(trx, 'alerts');
  });
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.config.client !== 'pg') return;
  await knex.transaction(async (trx) => {
    await convertToPlain(trx, 'locations', ['device_id', 'date_time']);
    await convertToPlain(trx, 'alerts', ['id']);
  });
}
