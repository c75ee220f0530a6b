import type { Knex } from 'knex';
import * as m001 from './001-initial.js';
import * as m002 from './002-unknown-devices.js';
import * as m003 from './003-outbox.js';
import * as m004 from './004-device-model.js';
import * as m005 from './005-commands.js';
import * as m006 from './006-commands-expiry-index.js';
import * as m007 from './007-device-log.js';
import * as m008 from './008-rules.js';
import * as m009 from './009-rule-states.js';
import * as m010 from './010-forwards.js';
import * as m011 from './011-alert-rule.js';
import * as m012 from './012-device-protocol-options.js';
import * as m013 from './013-account-retention.js';
import * as m014 from './014-pg-partitions.js';
import * as m015 from './015-device-distance.js';
import * as m016 from './016-reports.js';

/** Every migration, in order. Adding one is a new file and one line here. */
const migrations: Record<string, Knex.Migration> = {
  '001-initial': m001,
  '002-unknown-devices': m002,
  '003-outbox': m003,
  '004-device-model': m004,
  '005-commands': m005,
  '006-commands-expiry-index': m006,
  '007-device-log': m007,
  '008-rules': m008,
  '009-rule-states': m009,
  '010-forwards': m010,
  '011-alert-rule': m011,
  '012-device-protocol-options': m012,
  '013-account-retention': m013,
  '014-pg-partitions': m014,
  '015-device-distance': m015,
  '016-reports': m016,
};

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(migrations),
  getMigrationName: (name) => name,
  getMigration: async (name) => migrations[name],
};
