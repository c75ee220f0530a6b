/**
 * A device id: 1 to DEVICE_ID_MAX_LENGTH of DEVICE_ID_PATTERN's ASCII letters, digits and
 * `_ . : -`, so as many bytes as characters (devices.id is 64 long; the REST schema checks it).
 */
export const DEVICE_ID_MAX_LENGTH = 64;
export const DEVICE_ID_PATTERN = /^[A-Za-z0-9_.:-]+$/;

/** A device as the REST API shows it (docs/contract.md §2 "Devices"). */
export interface Device {
  id: string;
  name: string;
  description: string | null;
  min: string | null;
  tags: Record<string, string>;
  expires: string | null;
  dailyEmailLimit: number;
  dailySmsLimit: number;
  emailsSentToday: number;
  smsSentToday: number;
  expired: boolean;
  protocol: string | null;
  lastConnection: string | null;
  /** the tracker's model as its maker names it (e.g. FMB920, VL103): decoders read some frames by it */
  model: string | null;
  /** decoder settings by name (ATrack `form`, Navtelecom `flexDataSize`): decoders read them as Traccar reads its configuration */
  protocolOptions: Record<string, string>;
  creation: string;
  alertEmails: string[];
  alertPhones: string[];
  groups: string[];
  /** km travelled, computed by trackgate from the positions (core/locations/distance.ts); 0 before the first */
  totalDistance: number;
}

/** A device as stored (epoch ms, account scope, secrets). */
export interface DeviceRecord {
  id: string;
  accountId: string;
  name: string;
  description: string | null;
  min: string | null;
  tags: Record<string, string>;
  expiresAt: number | null;
  dailyEmailLimit: number;
  dailySmsLimit: number;
  alertEmails: string[];
  alertPhones: string[];
  protocol: string | null;
  lastConnection: number | null;
  /** set by the operator; the gateway decodes the device's frames with it (DecodeContext.model) */
  model: string | null;
  /** set by the operator; the gateway decodes the device's frames with them (DecodeContext.options) */
  protocolOptions: Record<string, string>;
  mqttPasswordHash: string | null;
  creation: number;
  modification: number;
}

/**
 * What a gateway process is told of a device (gateway/ipc/ `resolve`): what its listeners use to
 * decode the device's frames (its model and settings), show them on its account's raw-frame feed, store and
 * acknowledge them, and keep the record cached while the device is not expired. Nothing of the
 * device's name, tags, alert e-mails and phones, limits or MQTT password: an edge gateway holding
 * the link's secret must not read every account's devices by resolving their ids.
 */
export type GatewayDevice = Pick<DeviceRecord, 'id' | 'accountId' | 'model' | 'protocolOptions' | 'expiresAt'>;

export const gatewayDevice = (d: DeviceRecord): GatewayDevice => ({
  id: d.id,
  accountId: d.accountId,
  model: d.model,
  protocolOptions: d.protocolOptions,
  expiresAt: d.expiresAt,
});

export const isExpired = (d: { expiresAt: number | null }, nowMs: number): boolean =>
  d.expiresAt !== null && d.expiresAt <= nowMs;
