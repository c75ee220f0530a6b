/** A command to a device (docs/contract.md "Commands"). */
export type CommandFormat = 'Text' | 'Hex' | 'Base64';
export const COMMAND_FORMATS: readonly CommandFormat[] = ['Text', 'Hex', 'Base64'];

/**
 * queued: waits for the device (offline, or behind the command in flight); sent: written to the
 * device (or handed to the SMS gateway), no answer yet; answered: the device's reply is `result`;
 * expired: its `ttl` ran out while queued; failed: it could not be delivered (`result` says why);
 * cancelled: deleted while queued.
 */
export type CommandStatus = 'queued' | 'sent' | 'answered' | 'expired' | 'failed' | 'cancelled';

/** What a reply echoes of its command (protocols/types.ts CommandMatch), as stored with the command. */
export type CommandMatchData = Record<string, string | number>;

/** A command as the REST API shows it (*ext* `command`). */
export interface Command {
  id: number;
  status: CommandStatus;
  command: string;
  format: CommandFormat;
  sms: boolean;
  created: string;
  sent: string | null;
  answered: string | null;
  expires: string;
  attempts: number;
  result: string | null;
}

/** A command as stored (epoch ms). */
export interface CommandRecord {
  id: number;
  deviceId: string;
  accountId: string;
  command: string;
  format: CommandFormat;
  sms: boolean;
  status: CommandStatus;
  createdAt: number;
  sentAt: number | null;
  answeredAt: number | null;
  expiresAt: number;
  attempts: number;
  result: string | null;
  match: CommandMatchData | null;
}

/** An entry of a device's log as the REST API shows it (*ext* `GET /api/devices/{deviceId}/log`). */
export interface DeviceLogItem {
  id: number;
  dateTime: string;
  /** `unsolicitedReply`: a reply to a command that matches no command sent to the device */
  type: string;
  protocol: string;
  text: string;
  /** what the reply says it did, when it says (JT808 0x0001: ok, failed, badMessage, unsupported) */
  status?: string;
}
