import type { Knex } from 'knex';
import { dropColumn } from './drop-column.js';

/**
 * `alerts.rule_id`: the alert rule that raised an alert (null for a tracker's alarm and one raised
 * over REST). A rule's alert is a repeat only of the same rule's alert at the same fix time: two
 * rules with one alert name (SpeedLimit 90 and 120, two overlapping ForbiddenArea zones) each
 * raise and notify their own.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('alerts', (t) => {
    t.string('rule_id', 64);
  });
}

export async function down(knex: Knex): Promise<void> {
  await dropColumn(knex, 'alerts', 'rule_id');
}
