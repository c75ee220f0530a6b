/**
 * Tells a storage outage (the database does not answer, refuses connections, is shutting down,
 * its disk is full or locked) from a fault in the request or the code. An outage is temporary:
 * REST answers 503 so clients retry, trackers get no acknowledgement so they resend.
 */

// Connections that cannot be opened or were cut (Node system errors, as pg and knex pass them on).
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

// PostgreSQL SQLSTATEs (PostgreSQL manual, appendix A): class 08 connection exception but 08P01
// (protocol violation: what a NUL byte in a query gets, the request's fault), 53 insufficient
// resources (disk full, out of memory, too many connections), 57P01–57P03 shutdown and start-up.
const PG_CODE = /^(08(?!P01)...|53...|57P0[123])$/;

// SQLite result codes (sqlite.org/rescode.html) for a database that is locked, full or unreadable.
const SQLITE_CODE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY)(_|$)/;

// SQLite rolls a transaction back by itself only when it is full, cannot read or write its file,
// is busy or out of memory (sqlite.org/lang_transaction.html): knex's ROLLBACK then fails with
// this, and its error is the one reported, the SQLITE_FULL or SQLITE_IOERR behind it lost.
const SQLITE_ROLLED_BACK = /cannot rollback - no transaction is active/;

// SQLite could not make the shared-memory index of a WAL database (its `-shm` file, 32 KiB): no room
// on the disk for it, or a directory it may not write (sqlite.org/rescode.html, sqlite.org/wal.html).
const SQLITE_NO_SHM = /^SQLITE_(IOERR_SHM|READONLY_CANTINIT)/;

// the code of an error the database gave (a SQLite result code, a PostgreSQL SQLSTATE), not Node's
const DATABASE_CODE = /^(SQLITE_[A-Z_]+|(?=.*[0-9])[0-9A-Z]{5})$/;

// pg reports a connection lost mid-query without a code.
const PG_MESSAGE =
  /Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect/i;

export function isStorageUnavailable(e: unknown, depth = 0): boolean {
  if (!e || typeof e !== 'object' || depth > 3) return false;
  const err = e as { name?: unknown; code?: unknown; message?: unknown; errors?: unknown; cause?: unknown };
  // knex: no connection could be taken from the pool in time
  if (err.name === 'KnexTimeoutError') return true;
  const code = typeof err.code === 'string' ? err.code : '';
  if (NETWORK_CODES.has(code) || PG_CODE.test(code) || SQLITE_CODE.test(code)) return true;
  if (typeof err.message === 'string' && PG_MESSAGE.test(err.message)) return true;
  if (code === 'SQLITE_ERROR' && typeof err.message === 'string' && SQLITE_ROLLED_BACK.test(err.message)) return true;
  // Node reports a refused connection to every address of a host as one AggregateError.
  if (Array.isArray(err.errors) && err.errors.some((x) => isStorageUnavailable(x, depth + 1))) return true;
  return isStorageUnavailable(err.cause, depth + 1);
}

/**
 * What an operator is told of a storage error: the database's own words, without the statement
 * knex puts before them ("insert into … - database or disk is full"), and the error behind knex's
 * failed ROLLBACK named as such.
 */
export function describeStorageError(e: unknown): string {
  const err = e as { message?: unknown; code?: unknown };
  const message = err?.message;
  if (typeof message !== 'string') return String(e);
  if (SQLITE_ROLLED_BACK.test(message))
    return 'SQLite rolled the write back by itself: its disk is full, its file cannot be written, or memory ran out';
  // knex: `${statement with its values} - ${the driver's message}`, on errors carrying SQLite's or PostgreSQL's code
  const cut = message.lastIndexOf(' - ');
  return typeof err.code === 'string' && DATABASE_CODE.test(err.code) && cut >= 0 ? message.slice(cut + 3) : message;
}

/** SQLite cannot open its WAL database shared (no room or no right to create the `-shm` file); it can, held exclusively. */
export function isSqliteSharedMemoryRefused(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && SQLITE_NO_SHM.test(code);
}

// PostgreSQL SQLSTATEs of a transaction that lost a conflict with another one and was rolled back:
// 40001 serialization failure, 40P01 deadlock detected. The same transaction, run again, succeeds.
const PG_CONFLICT = new Set(['40001', '40P01']);

/** The database rolled the transaction back for a conflict with another one: running it again is the cure. */
export function isTransientConflict(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && PG_CONFLICT.has(code);
}
