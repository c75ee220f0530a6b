import type { Knex } from 'knex';

/** The first schema: accounts, users, devices, groups, locations, alerts, settings. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('settings', (t) => {
    t.string('key', 100).primary();
    t.text('value').notNullable();
  });
  await knex.schema.createTable('accounts', (t) => {
    t.string('id', 64).primary();
    t.string('name', 200).notNullable();
    t.integer('licenses').notNullable();
    t.string('time_zone', 64).notNullable().defaultTo('UTC');
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.createTable('users', (t) => {
    t.string('id', 64).primary();
    t.string('account_id', 64).notNullable().references('accounts.id');
    t.string('user_name', 200).notNullable();
    t.string('user_name_key', 200).notNullable().unique();
    t.string('name', 200).notNullable();
    t.string('email', 320).notNullable();
    t.string('country', 2).notNullable();
    t.string('time_zone', 64).notNullable();
    t.text('description');
    t.text('message');
    t.boolean('disabled').notNullable().defaultTo(false);
    t.text('disabled_message');
    t.text('tags').notNullable().defaultTo('{}');
    t.text('privileges').notNullable().defaultTo('[]');
    t.string('group_id', 64);
    t.bigInteger('from_at');
    t.bigInteger('expires_at');
    t.text('password_hash');
    t.string('api_key_hash', 128).notNullable();
    t.integer('key_version').notNullable().defaultTo(1);
    t.bigInteger('creation').notNullable();
    t.bigInteger('modification').notNullable();
    t.bigInteger('last_login');
    t.index(['account_id']);
  });
  await knex.schema.createTable('devices', (t) => {
    t.string('id', 64).primary();
    t.string('account_id', 64).notNullable().references('accounts.id');
    t.string('name', 200).notNullable();
    t.text('description');
    t.string('min', 40);
    t.text('tags').notNullable().defaultTo('{}');
    t.bigInteger('expires_at');
    t.integer('daily_email_limit').notNullable().defaultTo(10);
    t.integer('daily_sms_limit').notNullable().defaultTo(10);
    t.text('alert_emails').notNullable().defaultTo('[]');
    t.text('alert_phones').notNullable().defaultTo('[]');
    t.string('protocol', 40);
    t.bigInteger('last_connection');
    t.text('mqtt_password_hash');
    t.bigInteger('creation').notNullable();
    t.bigInteger('modification').notNullable();
    t.index(['account_id']);
  });
  await knex.schema.createTable('groups', (t) => {
    t.string('id', 64).primary();
    t.string('account_id', 64).notNullable().references('accounts.id');
    t.string('name', 200).notNullable();
    t.text('description');
    t.bigInteger('creation').notNullable();
    t.bigInteger('last_modified').notNullable();
    t.index(['account_id']);
  });
  await knex.schema.createTable('group_devices', (t) => {
    t.string('group_id', 64).notNullable().references('groups.id').onDelete('CASCADE');
    t.string('device_id', 64).notNullable().references('devices.id').onDelete('CASCADE');
    t.primary(['group_id', 'device_id']);
    t.index(['device_id']);
  });
  // History, keyed by (device, fix time): re-sending the same fix is a no-op.
  await knex.schema.createTable('locations', (t) => {
    t.string('device_id', 64).notNullable();
    t.bigInteger('date_time').notNullable();
    t.bigInteger('server_time').notNullable();
    t.text('data').notNullable();
    t.primary(['device_id', 'date_time']);
  });
  // The location with the latest fix time per device, so lastLocation never scans history.
  await knex.schema.createTable('last_locations', (t) => {
    t.string('device_id', 64).primary();
    t.bigInteger('date_time').notNullable();
    t.text('data').notNullable();
  });
  await knex.schema.createTable('alerts', (t) => {
    t.increments('id').primary();
    t.string('device_id', 64).notNullable();
    t.bigInteger('date_time').notNullable();
    t.string('alert_name', 64).notNullable();
    t.text('data').notNullable();
    t.text('notifications').notNullable().defaultTo('[]');
    t.text('suppressed').notNullable().defaultTo('{}');
    t.bigInteger('created_at').notNullable();
    t.index(['device_id', 'date_time']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'alerts',
    'last_locations',
    'locations',
    'group_devices',
    'groups',
    'devices',
    'users',
    'accounts',
    'settings',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
