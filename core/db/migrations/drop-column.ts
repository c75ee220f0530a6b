import type { Knex } from 'knex';

/**
 * Drops a column in a migration's `down`. On SQLite, knex's `dropColumn` copies the table into a
 * new one and drops the old: with foreign keys on, and inside the migration's transaction where
 * they cannot be turned off, dropping a table others reference (accounts by devices, groups, users
 * and forwards) fails as soon as one row is referenced, and dropping `devices` would cascade to
 * the group memberships. SQLite's own `ALTER TABLE ... DROP COLUMN` (3.35 and later) removes the
 * column in place and keeps every row and reference (the column must not be in an index).
 */
export async function dropColumn(knex: Knex, table: string, column: string): Promise<void> {
  if (knex.client.config.client === 'pg') {
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn(column);
    });
    return;
  }
  await knex.raw('alter table ?? drop column ??', [table, column]);
}
