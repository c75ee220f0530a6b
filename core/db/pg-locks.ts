/** PostgreSQL transaction-level advisory locks on sets of text keys. */
import type { Knex } from 'knex';
import { pgTextArray } from './pg-arrays.js';

/**
 * Takes the advisory locks (`lockClass`, hashtext(key)) of these keys until the transaction ends,
 * in one statement, in the order of the lock keys themselves: two transactions never wait for each
 * other in a cycle, even where two keys' hashes collide.
 */
export async function lockKeysInOrder(
  trx: Knex | Knex.Transaction,
  lockClass: number,
  keys: readonly string[],
): Promise<void> {
  await trx.raw(
    'select count(pg_advisory_xact_lock(?, h)) from (select distinct hashtext(a) as h from unnest(?::text[]) as a order by h) s',
    [lockClass, pgTextArray(keys)],
  );
}
