/**
 * trackgate backup and restore, and account create's chosen key, on the real command: what they
 * refuse before anything is made or moved (issues 36.10, 36.11, 36.12, 37.9).
 */
import test from 'ava';
import {
  linkSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { testEnv } from '../helpers/server.js';
import { runCli } from '../helpers/run-cli.js';
import { createStorage } from '../helpers/backends.js';
import { openDb, migrate, closeDb } from '../../core/db/db.js';
import { createAccountsService } from '../../core/accounts/accounts.service.js';
import { systemClock } from '../../core/clock.js';
import { backupSqlite, restoreSqlite } from '../../core/db/backup.js';

/** Commands of a test run side by side; each takes seconds under tsx on a busy machine, so the bound is generous. */
const cli = (args: string[], env: Record<string, string>) => runCli(args, testEnv(env));

/** A scratch folder with a data directory `data` holding a database with one account, Acme (made here: a command takes seconds on a busy machine). */
async function withAccount(t: {
  teardown: (f: () => Promise<void> | void) => void;
}): Promise<{ scratch: string; dataDir: string; env: Record<string, string> }> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'tg-backup-restore-'));
  t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
  const dataDir = path.join(scratch, 'data');
  const db = openDb({ dataDir });
  try {
    await migrate(db);
    await createAccountsService(db, systemClock).create({ name: 'Acme', licenses: 5, adminUser: 'acme-admin' });
  } finally {
    await closeDb(db);
  }
  return { scratch, dataDir, env: { TRACKGATE_DATA_DIR: dataDir } };
}

async function accountNames(dataDir: string): Promise<string[]> {
  const db = openDb({ dataDir });
  try {
    return (await createAccountsService(db, systemClock).list()).map((a) => a.name);
  } finally {
    await closeDb(db);
  }
}

test.serial(
  "backup-restore: restore of the data directory's own trackgate.sqlite, by any path (itself, a symlink, .., a hard link), is refused before anything moves",
  async (t) => {
    const { scratch, dataDir, env } = await withAccount(t);
    const own = path.join(dataDir, 'trackgate.sqlite');
    const symlink = path.join(scratch, 'link.sqlite');
    symlinkSync(own, symlink);
    const hardLink = path.join(scratch, 'hard.sqlite');
    linkSync(own, hardLink);
    const before = readdirSync(dataDir).sort();
    // the command, by the symlink (which it followed into ENOENT after renaming the database aside)
    const r = await cli(['restore', symlink], env);
    t.is(r.status, 1, r.stdout);
    t.regex(
      r.stderr,
      /link\.sqlite is .*trackgate\.sqlite, the database of TRACKGATE_DATA_DIR itself; .*nothing was changed/,
    );
    t.deepEqual(readdirSync(dataDir).sort(), before, 'nothing moved');
    // what the command calls, by every path
    for (const alias of [own, symlink, `${dataDir}/../data/trackgate.sqlite`, hardLink]) {
      t.throws(
        () => restoreSqlite(dataDir, alias, new Date()),
        { message: /the database of TRACKGATE_DATA_DIR itself/ },
        alias,
      );
      t.deepEqual(readdirSync(dataDir).sort(), before, `${alias}: nothing moved`);
    }
    t.deepEqual(await accountNames(dataDir), ['Acme'], 'the database is the one it was');
  },
);

test.serial('backup-restore: backup FILE leaves an unrelated FILE.partial alone', async (t) => {
  const { scratch, env } = await withAccount(t);
  const file = path.join(scratch, 'nightly.sqlite');
  writeFileSync(`${file}.partial`, "the user's own notes");
  const r = await cli(['backup', file], env);
  t.is(r.status, 0, r.stderr);
  t.is(readFileSync(`${file}.partial`, 'utf8'), "the user's own notes");
  t.true(existsSync(file));
  t.deepEqual(
    readdirSync(scratch).filter((n) => n.includes('partial')),
    ['nightly.sqlite.partial'],
    'no partial file of the backup left behind',
  );
});

test.serial(
  'backup-restore: backup into a folder that does not exist names the folder, and makes nothing',
  async (t) => {
    const { scratch, dataDir, env } = await withAccount(t);
    const missing = path.join(scratch, 'no-such-folder');
    const r = await cli(['backup', path.join(missing, 'x.sqlite')], env);
    t.is(r.status, 1);
    t.true(r.stderr.includes(`the folder ${missing} does not exist`), r.stderr);
    t.notRegex(r.stderr, /unable to open database/);
    t.false(existsSync(missing));
    const notFolder = path.join(scratch, 'a-file');
    writeFileSync(notFolder, 'x');
    t.throws(() => backupSqlite(path.join(dataDir, 'trackgate.sqlite'), path.join(notFolder, 'x.sqlite')), {
      message: /a-file is not a folder/,
    });
  },
);

test.serial(
  'backup-restore: account create refuses an admin API key shorter than 16 characters (as TRACKGATE_ADMIN_API_KEY), empty included, and makes no database',
  async (t) => {
    const scratch = mkdtempSync(path.join(os.tmpdir(), 'tg-admin-key-'));
    t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
    const env = { TRACKGATE_DATA_DIR: path.join(scratch, 'data') };
    const keys = ['a', ''];
    const runs = await Promise.all(
      keys.map((key) =>
        cli(
          [
            'account',
            'create',
            '--name',
            'Acme',
            '--licenses',
            '5',
            '--admin-user',
            'acme-admin',
            '--admin-api-key',
            key,
          ],
          env,
        ),
      ),
    );
    for (const [i, r] of runs.entries()) {
      t.is(r.status, 1, `"${keys[i]}": ${r.stdout}`);
      t.regex(r.stderr, /--admin-api-key.*must be at least 16 characters/, `"${keys[i]}"`);
    }
    t.false(existsSync(env.TRACKGATE_DATA_DIR), 'no database made');
  },
);

test.serial(
  'backup-restore: the accounts service itself refuses a chosen admin API key shorter than 16 characters, whoever calls it',
  async (t) => {
    const storage = await createStorage('sqlite');
    const db = openDb({ dataDir: storage.env.TRACKGATE_DATA_DIR });
    t.teardown(async () => {
      await closeDb(db);
      await storage.cleanup();
    });
    await migrate(db);
    const accounts = createAccountsService(db, systemClock);
    for (const [adminApiKey, reason] of [
      ['a', /must be at least 16 characters/],
      ['', /must be at least 16 characters/],
      [' 0123456789abcdef ', /must not begin or end with a blank/],
      ['k'.repeat(4097), /at most 4096 characters/],
    ] as const) {
      const e = await t.throwsAsync(
        accounts.create({ name: 'Acme', licenses: 1, adminUser: 'acme-admin', adminApiKey }),
      );
      t.regex(e!.message, reason);
    }
    t.deepEqual(await accounts.list(), [], 'no account made');
    t.like(
      await accounts.create({ name: 'Acme', licenses: 1, adminUser: 'acme-admin', adminApiKey: '0123456789abcdef' }),
      { apiKey: '0123456789abcdef' },
    );
  },
);
