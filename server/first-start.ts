/** The first start's account, its admin and API key; and, on later starts, the admin key applied or why not. */
import type { Config } from '../config/config.js';
import type { Db } from '../core/db/db.js';
import type { Logger } from '../core/logger.js';
import type { AccountsService } from '../core/accounts/accounts.service.js';
import * as accountsRepo from '../core/accounts/accounts.repository.js';
import * as usersRepo from '../core/users/users.repository.js';
import { describeStorageError, isStorageUnavailable } from '../core/db/storage-errors.js';

export interface Bootstrap {
  accountId: string;
  userName: string;
  apiKey: string;
  generated: boolean;
}

/**
 * Creates the first account and its admin when there is none (said once, with a generated key
 * shown whatever the log level); a database that refuses writes keeps the stored admin key.
 */
export async function firstStart(
  config: Readonly<Config>,
  db: Db,
  accounts: AccountsService,
  logger: Logger,
): Promise<Bootstrap | undefined> {
  const created = await accounts
    .bootstrap({
      name: 'Default account',
      licenses: config.licenses,
      adminUser: config.adminUser,
      adminApiKey: config.adminApiKey,
    })
    .catch(async (e: unknown) => {
      if (!isStorageUnavailable(e)) throw e;
      if (!(await accountsRepo.listIds(db)).length)
        throw new Error(
          `the first account cannot be created: storage refuses writes (${describeStorageError(e)}); free disk space (or make it writable) and start again`,
          { cause: e },
        );
      // a database that refuses writes (a full disk) keeps the admin's stored key
      logger.warn(
        { err: describeStorageError(e), variable: 'TRACKGATE_ADMIN_API_KEY' },
        'the new admin API key cannot be stored (storage refuses writes): the stored one stays valid until a start that can store it',
      );
      return undefined;
    });
  // a later start applies TRACKGATE_ADMIN_API_KEY to the user TRACKGATE_ADMIN_USER names, which must exist
  if (!created && config.adminApiKey !== undefined && !(await usersRepo.findByUserName(db, config.adminUser))) {
    logger.warn(
      { variable: 'TRACKGATE_ADMIN_USER', userName: config.adminUser },
      `TRACKGATE_ADMIN_API_KEY is not applied: there is no user "${config.adminUser}" (TRACKGATE_ADMIN_USER is read as a new name on the first start only); set TRACKGATE_ADMIN_USER to the admin's user name`,
    );
  }
  if (!created) return undefined;
  const generated = config.adminApiKey === undefined;
  // the one line that shows a generated key: at TRACKGATE_LOG_LEVEL=warn or error it would be dropped, the admin locked out
  const hidesInfo = config.logLevel === 'warn' || config.logLevel === 'error';
  const say = generated && hidesInfo ? logger.error.bind(logger) : logger.info.bind(logger);
  say(
    generated
      ? { accountId: created.accountId, userName: created.userName, apiKey: created.apiKey }
      : { accountId: created.accountId, userName: created.userName },
    generated
      ? 'first start: created the account and its admin; this API key is shown once, keep it'
      : 'first start: created the account and its admin',
  );
  return { accountId: created.accountId, userName: created.userName, apiKey: created.apiKey, generated };
}
