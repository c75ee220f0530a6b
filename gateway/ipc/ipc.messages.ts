/**
 * Every message between the core and its gateway processes (docs/scaling.md), over net-ipc with
 * MessagePack. A gateway process decodes and runs the ingest steps; the core resolves devices,
 * checks and stores rows, queues commands and shows frames. Requests are answered; notes are one-way.
 * Batched: what one side has to say in one turn of its event loop leaves as one `batch` (answers:
 * `answers`), one write instead of one per tracker frame, while a slow request holds back no other.
 * Only `hello` goes as a net-ipc request of its own: the link is not up before its answer.
 */
import type { AlertInput } from '../../core/model/alert.js';
import type { LiveFrame } from '../shared/frame-tap.js';
import type { CommandQueue } from '../shared/connection-commands.js';
import type { TrackerSnapshot } from '../../core/metrics/counts.js';

/** how often a gateway process reports its listener counts to the core */
export const COUNTS_EVERY_MS = 1000;

/** at most this often per device, a gateway process tells the core it heard a UDP device */
export const HEARD_EVERY_MS = 1000;

/**
 * The most rows one `store` request may carry (a tracker frame holds at most 255 records) and the
 * longest location JSON (attributes are cut at MAX_ATTRIBUTES_JSON, 16,384 characters, by the steps)
 */
export const MAX_STORE_ROWS = 4096;
export const MAX_LOCATION_JSON = 65_536;

/** What a gateway process sends in net-ipc's connect payload: the core refuses a connection without its secret. */
export interface ConnectPayload {
  secret: string;
  /** for the log: the process's pid and, for a local gateway process, its cluster worker id */
  pid: number;
  worker?: number;
}

export type CommandCall = keyof CommandQueue;
export const COMMAND_CALLS: readonly CommandCall[] = [
  'recover',
  'next',
  'markSent',
  'markFailed',
  'answered',
  'unsolicited',
];

export type GatewayRequest =
  /** ports: null until the listeners are bound (the first hello comes before) */
  | { t: 'hello'; ports: Record<string, number> | null; online: string[] }
  /** alternatives: DeviceDirectory.resolve's other forms of the identifier, tried in order */
  | { t: 'resolve'; identifier: string; protocol: string; remote: string | null; alternatives?: string[] }
  /**
   * the device by id: the core stores under its own record of it (cached), never one a gateway
   * sends; rows as [fix time (epoch ms), the location's JSON]; serverTime: when the gateway
   * process received them (epoch ms)
   */
  | {
      t: 'store';
      deviceId: string;
      protocol: string;
      serverTime: number;
      rows: [number, string][];
      alerts: AlertInput[];
    }
  | { t: 'command'; call: CommandCall; args: unknown[] };

export type GatewayNote =
  | { t: 'touch'; deviceId: string; protocol: string }
  | { t: 'frame'; accountId: string | null; deviceId: string | null; frame: LiveFrame }
  | { t: 'online'; deviceId: string }
  | { t: 'offline'; deviceId: string }
  /** a datagram of the device was handled (at most once a second per device): it listens for commands a moment */
  | { t: 'heard'; deviceId: string }
  /** the process's listener counts since it started, by protocol (every COUNTS_EVERY_MS), for the core's GET /metrics */
  | { t: 'counts'; source: string; trackers: Record<string, TrackerSnapshot> };

/** A gateway process's turn: notes and requests in the order made; each request is answered in `answers` under its `id`. */
export type BatchItem = { note: GatewayNote } | { id: number; request: GatewayRequest };
export interface GatewayBatch {
  t: 'batch';
  items: BatchItem[];
}

/**
 * the most items in one batch: a turn with more sends each MAX_BATCH_ITEMS as they are made, so
 * that the core writes the first trackers' positions while this process still decodes the rest of
 * the turn's frames (1,000 trackers read in one turn and sent as one message left each process
 * idle while the other worked)
 */
export const MAX_BATCH_ITEMS = 100;

export type CoreNote =
  /** answers to batched requests, as [request id, answer] */
  | { t: 'answers'; answers: [number, Answer][] }
  | { t: 'deliver'; deviceId: string }
  | { t: 'drop'; deviceId: string }
  | { t: 'deviceChanged'; deviceId: string }
  | { t: 'interest'; accounts: string[]; unknown: boolean };

/** An error as it crosses: `code` kept, so a storage outage is still told from a fault (core/db/storage-errors.ts). */
export interface WireError {
  message: string;
  code?: string;
  name?: string;
}

export type Answer<T = unknown> = { ok: true; value?: T } | { ok: false; error: WireError };

export function toWire(e: unknown): WireError {
  const err = e as { message?: unknown; code?: unknown; name?: unknown };
  return {
    message: typeof err?.message === 'string' ? err.message : String(e),
    ...(typeof err?.code === 'string' && { code: err.code }),
    ...(typeof err?.name === 'string' && { name: err.name }),
  };
}

export function fromWire(w: WireError): Error {
  const e = new Error(w.message) as Error & { code?: string };
  if (w.code) e.code = w.code;
  if (w.name) e.name = w.name;
  return e;
}
