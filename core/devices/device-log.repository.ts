/** The device_log table (migration 007): the only SQL of a device's log. */
import type { Knex } from 'knex';
import { parseJson } from '../db/json.js';

type Q = Knex | Knex.Transaction;

/** What a device said that belongs to no stored report: a reply to no command (`unsolicitedReply`). */
export type DeviceLogType = 'unsolicitedReply';

export interface DeviceLogEntry {
  id: number;
  deviceId: string;
  accountId: string;
  /** epoch ms */
  at: number;
  type: DeviceLogType;
  protocol: string;
  text: string;
  detail: Record<string, unknown> | null;
}

/** entries kept per device: older ones are pruned as new ones come */
export const DEVICE_LOG_KEEP = 500;

const toEntry = (r: Record<string, unknown>): DeviceLogEntry => ({
  id: Number(r.id),
  deviceId: String(r.device_id),
  accountId: String(r.account_id),
  at: Number(r.at),
  type: r.type as DeviceLogType,
  protocol: String(r.protocol),
  text: String(r.text),
  detail: parseJson<Record<string, unknown> | null>(r.detail, null),
});

/** Adds an entry and prunes the device's entries beyond the newest DEVICE_LOG_KEEP. */
export async function append(db: Q, e: Omit<DeviceLogEntry, 'id'>): Promise<void> {
  await db('device_log').insert({
    device_id: e.deviceId,
    account_id: e.accountId,
    at: e.at,
    type: e.type,
    protocol: e.protocol,
    text: e.text,
    detail: e.detail === null ? null : JSON.stringify(e.detail),
  });
  const edge = await db('device_log')
    .where({ device_id: e.deviceId })
    .orderBy('id', 'desc')
    .offset(DEVICE_LOG_KEEP)
    .first('id');
  if (edge) await db('device_log').where({ device_id: e.deviceId }).andWhere('id', '<=', Number(edge.id)).delete();
}

/** A device's entries, newest first. */
export async function list(db: Q, deviceId: string, limit: number): Promise<DeviceLogEntry[]> {
  return (await db('device_log').where({ device_id: deviceId }).orderBy('id', 'desc').limit(limit)).map(toEntry);
}
