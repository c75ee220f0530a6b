/**
 * The reads of a device that decide who may see it (access.ts). They live here, below
 * core/devices/ (whose repository re-exports them), as every feature asks access first.
 */
import type { DeviceRecord } from '../model/device.js';
import { parseJson, toNum } from '../db/json.js';
import type { Db } from '../db/db.js';

/** A row of `devices` as the core's record. */
export const deviceFromRow = (r: Record<string, unknown>): DeviceRecord => ({
  id: String(r.id),
  accountId: String(r.account_id),
  name: String(r.name),
  description: (r.description as string | null) ?? null,
  min: (r.min as string | null) ?? null,
  tags: parseJson<Record<string, string>>(r.tags, {}),
  expiresAt: toNum(r.expires_at),
  dailyEmailLimit: Number(r.daily_email_limit),
  dailySmsLimit: Number(r.daily_sms_limit),
  alertEmails: parseJson<string[]>(r.alert_emails, []),
  alertPhones: parseJson<string[]>(r.alert_phones, []),
  protocol: (r.protocol as string | null) ?? null,
  lastConnection: toNum(r.last_connection),
  model: (r.model as string | null) ?? null,
  protocolOptions: parseJson<Record<string, string>>(r.protocol_options, {}),
  mqttPasswordHash: (r.mqtt_password_hash as string | null) ?? null,
  creation: Number(r.creation),
  modification: Number(r.modification),
});

/** The device, through the hot-read connection: the gateway's and the API's lookup on every frame and request. */
export async function lookup(db: Db, id: string): Promise<DeviceRecord | undefined> {
  const r = await db.read.first('select * from devices where id = ?', id);
  return r ? deviceFromRow(r) : undefined;
}

/** The account a device belongs to, or undefined: the cheap check of who may see it. */
export async function accountOf(db: Db, id: string): Promise<string | undefined> {
  const r = await db.read.first('select account_id from devices where id = ?', id);
  return r ? String(r.account_id) : undefined;
}

export async function isInGroup(db: Db, deviceId: string, groupId: string): Promise<boolean> {
  return (
    (await db.read.first(
      'select 1 as x from group_devices where device_id = ? and group_id = ?',
      deviceId,
      groupId,
    )) !== undefined
  );
}
