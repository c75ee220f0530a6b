/** The `trackgate` command (docs/contract.md §1 "Command line"). */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { loadConfig, ConfigError, type Config } from './config/config.js';
import { serve } from './main.js';
import { openStorage } from './server/storage.js';
import { migrate, closeDb, sqlitePath } from './core/db/db.js';
import { backupSqlite, refuseOwnFiles, restoreSqlite, BackupError } from './core/db/backup.js';
import { lockDataDir } from './core/db/data-dir.lock.js';
import { compactSqlite, CompactError } from './core/db/compact.js';
import { systemClock } from './core/clock.js';
import { adminApiKeyProblem, createAccountsService, RETENTION_DAYS_MAX } from './core/accounts/accounts.service.js';
import * as unknownDevices from './core/devices/unknown-devices.repository.js';
import { DomainError } from './core/errors.js';
import { decodeFrame, decodeFrames } from './protocols/decode-frame.js';
import { runEdgeGateway } from './gateway-main.js';

function fail(message: string): never {
  process.stderr.write(`trackgate: ${message}\n`);
  process.exit(1);
}

function coreAddress(value: string): { host: string; port: number } {
  const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(value);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535)
    throw new InvalidArgumentError('must be host:port, e.g. core.example.com:5100');
  return { host: m[1], port: Number(m[2]) };
}

/** Checked as the option is read, so a key refused leaves no database behind. */
function adminApiKey(value: string): string {
  const problem = adminApiKeyProblem(value);
  if (problem) throw new InvalidArgumentError(`${problem}; leave the option out to have one generated`);
  return value;
}

function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('must be a whole number ≥ 0');
  return Number(value);
}

/** `--retention-days`: days, 0 (keep everything), or `default` (follow TRACKGATE_RETENTION_DAYS again). */
function retentionDays(value: string): number | 'default' {
  // not null: commander takes a null from a parser as the option given without a value
  if (value === 'default') return 'default';
  if (!/^\d+$/.test(value) || Number(value) > RETENTION_DAYS_MAX)
    throw new InvalidArgumentError(
      `must be a whole number of days from 0 (keep everything) to ${RETENTION_DAYS_MAX}, or default`,
    );
  return Number(value);
}

/**
 * The database of a command that reads or changes what is stored: with SQLite, one must exist in
 * TRACKGATE_DATA_DIR. Opening made one: a misspelt directory printed [] from a new empty database,
 * left behind for the next start to take as a first start.
 */
async function openExisting(config: Readonly<Config>): ReturnType<typeof openStorage> {
  const file = sqlitePath(config.dataDir);
  if (!config.databaseUrl && !existsSync(file))
    throw new ConfigError(
      'TRACKGATE_DATA_DIR',
      `there is no database at ${file}; set the data directory trackgate serve uses (trackgate migrate makes a new one)`,
    );
  return openStorage(config);
}

const program = new Command('trackgate').description('Self-hosted GPS tracking gateway').showHelpAfterError();

program
  .command('serve')
  .description('run the REST API, the MQTT broker and the tracker listeners (same as npm start)')
  .action(() => serve());

const account = program.command('account').description('accounts');
account
  .command('create')
  .description('create an account with an admin user; prints {accountId, userId, userName, apiKey}')
  .requiredOption('--name <name>', 'account name')
  .requiredOption('--licenses <n>', 'licences of the account', wholeNumber)
  .requiredOption('--admin-user <user>', "the admin's user name")
  .option('--admin-api-key <key>', "the admin's API key, at least 16 characters (default: generated)", adminApiKey)
  .option('--time-zone <zone>', "the account's IANA time zone (its day for daily limits)", 'UTC')
  .action(async (o: { name: string; licenses: number; adminUser: string; adminApiKey?: string; timeZone: string }) => {
    const config = loadConfig();
    const db = await openStorage(config);
    try {
      const created = await createAccountsService(db, systemClock).create({
        name: o.name,
        licenses: o.licenses,
        adminUser: o.adminUser,
        adminApiKey: o.adminApiKey,
        timeZone: o.timeZone,
      });
      process.stdout.write(`${JSON.stringify(created)}\n`);
    } finally {
      await closeDb(db);
    }
  });

account
  .command('list')
  .description(
    'list the accounts; prints a JSON array of {id, name, licenses, timeZone, licensesUsed, creation, retentionDays}',
  )
  .action(async () => {
    const db = await openExisting(loadConfig());
    try {
      process.stdout.write(`${JSON.stringify(await createAccountsService(db, systemClock).list())}\n`);
    } finally {
      await closeDb(db);
    }
  });

account
  .command('update')
  .description(
    "change an account's licences, name, time zone or retention (a running trackgate sees licences at once, a new time zone within a minute); prints the account",
  )
  .requiredOption('--id <id>', 'account id (see trackgate account list)')
  .option('--licenses <n>', 'licences of the account', wholeNumber)
  .option('--name <name>', 'account name')
  .option('--time-zone <zone>', "the account's IANA time zone (its day for daily limits)")
  .option(
    '--retention-days <n>',
    'days of locations and alerts kept (0: everything; default: TRACKGATE_RETENTION_DAYS); the next purge applies it (docs/operations.md "Retention")',
    retentionDays,
  )
  .action(
    async (o: {
      id: string;
      licenses?: number;
      name?: string;
      timeZone?: string;
      retentionDays?: number | 'default';
    }) => {
      if (o.licenses === undefined && o.name === undefined && o.timeZone === undefined && o.retentionDays === undefined)
        fail('account update: say what to change (--licenses, --name, --time-zone or --retention-days)');
      const db = await openExisting(loadConfig());
      try {
        const updated = await createAccountsService(db, systemClock).update(o.id, {
          licenses: o.licenses,
          name: o.name,
          timeZone: o.timeZone,
          retentionDays: o.retentionDays === 'default' ? null : o.retentionDays,
        });
        process.stdout.write(`${JSON.stringify(updated)}\n`);
      } finally {
        await closeDb(db);
      }
    },
  );

program
  .command('unknown-devices')
  .description(
    'identifiers that trackers reported and that match no active device (any account), newest first; prints a JSON array',
  )
  .option('--limit <n>', 'how many at most', wholeNumber, 100)
  .action(async (o: { limit: number }) => {
    const db = await openExisting(loadConfig());
    try {
      process.stdout.write(`${JSON.stringify(await unknownDevices.recent(db, o.limit))}\n`);
    } finally {
      await closeDb(db);
    }
  });

program
  .command('migrate')
  .description('bring the database schema up to date')
  .action(async () => {
    const config = loadConfig();
    const { openDb } = await import('./core/db/db.js');
    let db: ReturnType<typeof openDb>;
    try {
      db = openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    } catch (e) {
      // only SQLite's data directory is made here, synchronously
      throw new ConfigError('TRACKGATE_DATA_DIR', `${config.dataDir} cannot be created (${(e as Error).message})`);
    }
    try {
      const applied = await migrate(db);
      process.stdout.write(
        applied.length
          ? `applied ${applied.length} migration(s): ${applied.join(', ')}\n`
          : 'the schema is up to date; nothing to apply\n',
      );
    } finally {
      await closeDb(db);
    }
  });

program
  .command('backup')
  .description(
    'copy the SQLite database into FILE (a new file), consistent, while trackgate runs or not; docs/operations.md "Backup and restore"',
  )
  .argument('<file>', 'the backup file to create')
  .action((file: string) => {
    const config = loadConfig();
    if (config.databaseUrl)
      fail('backup: the database is PostgreSQL (TRACKGATE_DATABASE_URL): back it up with pg_dump');
    const copied = backupSqlite(sqlitePath(config.dataDir), file);
    process.stdout.write(`${JSON.stringify({ file: path.resolve(file), bytes: copied.bytes })}\n`);
  });

program
  .command('restore')
  .description(
    'make a backup FILE the database of TRACKGATE_DATA_DIR, trackgate stopped; the database there is kept aside; docs/operations.md "Backup and restore"',
  )
  .argument('<file>', 'a file trackgate backup wrote')
  .action((file: string) => {
    const config = loadConfig();
    if (config.databaseUrl)
      fail('restore: the database is PostgreSQL (TRACKGATE_DATABASE_URL): restore it with pg_restore or psql');
    // before the lock, which makes the data directory
    if (!existsSync(file)) fail(`restore: there is no file ${path.resolve(file)}; nothing was changed`);
    refuseOwnFiles(config.dataDir, file);
    let unlock: () => void;
    try {
      unlock = lockDataDir(config.dataDir);
    } catch (e) {
      throw new ConfigError(
        'TRACKGATE_DATA_DIR',
        `${config.dataDir} ${(e as Error).message}; stop it before a restore`,
      );
    }
    try {
      process.stdout.write(`${JSON.stringify(restoreSqlite(config.dataDir, file, new Date()))}\n`);
    } finally {
      unlock();
    }
  });

program
  .command('compact')
  .description(
    'rewrite the SQLite database so that it gives the pages retention frees back to the disk (auto_vacuum = incremental), trackgate stopped; docs/operations.md "Retention"',
  )
  .action(() => {
    const config = loadConfig();
    if (config.databaseUrl)
      fail('compact: the database is PostgreSQL (TRACKGATE_DATABASE_URL): its autovacuum and partition drops do this');
    const file = sqlitePath(config.dataDir);
    if (!existsSync(file)) fail(`compact: there is no database at ${file}; nothing was changed`);
    let unlock: () => void;
    try {
      unlock = lockDataDir(config.dataDir);
    } catch (e) {
      throw new ConfigError(
        'TRACKGATE_DATA_DIR',
        `${config.dataDir} ${(e as Error).message}; stop it before a compact`,
      );
    }
    try {
      process.stdout.write(`${JSON.stringify(compactSqlite(file))}\n`);
    } finally {
      unlock();
    }
  });

program
  .command('gateway')
  .description(
    'an edge gateway: the tracker listeners on this host, storing through the core at --core (docs/scaling.md "Scaling")',
  )
  .requiredOption('--core <host:port>', "the core's TRACKGATE_GATEWAY_LINK_PORT", coreAddress)
  .option(
    '--tls',
    "TLS to the core, trusting the system's authorities (TRACKGATE_GATEWAY_TLS_CA: trust that file instead)",
  )
  .action(async (o: { core: { host: string; port: number }; tls?: boolean }) => {
    await runEdgeGateway(loadConfig(), { ...o.core, tls: o.tls ?? false });
  });

program
  .command('decode')
  .description(
    'decode captured frames in order on one session, as one connection sends them, without storing them: one JSON line per frame (hex for binary protocols, text for text ones)',
  )
  .requiredOption('--protocol <name>', 'protocol name, e.g. gt06, teltonika, h02')
  .option('--udp', 'the frames are UDP datagrams of one peer')
  .option(
    '--hex',
    'the frames are given as hex digits, whatever the protocol (binary frames of text protocols, e.g. Suntech binary reports)',
  )
  .option('--model <model>', "the device's model, as its record names it (decoders of some protocols depend on it)")
  .option(
    '--option <name=value>',
    "a decoder setting of the device, as its record's protocolOptions holds it (repeatable), e.g. custom=true",
    decoderOption,
    {},
  )
  .argument('<frames...>', 'the frames, in the order the device sent them')
  .action(
    (
      frames: string[],
      o: { protocol: string; udp?: boolean; hex?: boolean; model?: string; option: Record<string, string> },
    ) => {
      const settings = { udp: o.udp ?? false, hex: o.hex ?? false, now: new Date(), model: o.model, options: o.option };
      try {
        if (frames.length === 1) {
          process.stdout.write(`${JSON.stringify(decodeFrame(o.protocol, frames[0], settings))}\n`);
          return;
        }
        const lines = decodeFrames(o.protocol, frames, settings);
        process.stdout.write(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
        const failed = lines.find((l) => 'error' in l);
        if (failed && 'error' in failed) fail(failed.error);
      } catch (e) {
        fail((e as Error).message.split('\n')[0]);
      }
    },
  );

/** `--option NAME=VALUE`, gathered into one object (a later NAME wins). */
function decoderOption(value: string, previous: Record<string, string>): Record<string, string> {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('expected NAME=VALUE, e.g. custom=true');
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof ConfigError) fail(`configuration error: ${e.message}`);
  if (e instanceof DomainError || e instanceof BackupError || e instanceof CompactError) fail(e.message);
  fail((e as Error).message.split('\n')[0]);
}
