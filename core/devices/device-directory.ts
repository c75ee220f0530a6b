/**
 * How the gateway knows a tracker: by the identifier its protocol reports, which is its device
 * `id`. Lookups are cached for a few seconds (a reconnect storm must not hammer the database);
 * a device changed or deleted is forgotten as soon as the event bus announces it (on every
 * instance when Redis relays events; should a relayed event be lost, the few seconds still bound
 * how stale a record can be). Unknown, deleted and expired devices are
 * recorded for operators, aggregated in memory and written every few seconds.
 */
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { EventBus } from '../events/event-bus.js';
import { isExpired, type DeviceRecord } from '../model/device.js';
import * as devices from './devices.repository.js';
import * as unknown from './unknown-devices.repository.js';

/** what a lookup found: the device record (D: what a gateway process is told of it, model/device.ts GatewayDevice) */
export type Resolution<D = DeviceRecord> =
  | { status: 'ok'; device: D }
  | { status: 'unknown' | 'expired' }
  /** an identifier no device can have and storage must not see (control characters, too long) */
  | { status: 'invalid'; reason: string };

/** device ids and recorded identifiers are at most this long (devices.id, unknown_devices.identifier) */
const MAX_IDENTIFIER_LENGTH = 64;
// C0 controls and DEL: PostgreSQL refuses NUL in text, and none belongs in an identifier.
const CONTROL = /[\u0000-\u001f\u007f]/;
// a lone UTF-16 surrogate cannot be stored as UTF-8
const LONE_SURROGATE = /\p{Cs}/u;

/** Why `identifier` can never name a device, or undefined when it may. */
export function identifierProblem(identifier: string): string | undefined {
  if (identifier.length === 0) return 'empty identifier';
  if (identifier.length > MAX_IDENTIFIER_LENGTH) return `identifier longer than ${MAX_IDENTIFIER_LENGTH} characters`;
  if (CONTROL.test(identifier)) return 'identifier contains a control character';
  if (LONE_SURROGATE.test(identifier)) return 'identifier is not well-formed Unicode';
  return undefined;
}

export interface DirectoryOptions {
  db: Db;
  clock: Clock;
  logger: Logger;
  events: EventBus;
  cacheMs?: number;
  flushMs?: number;
}

/** The gateway's view of devices by identifier (see the file's comment). */
export interface DeviceDirectory {
  /**
   * Resolves an identifier, or when no device has it, the first of `alternatives` (other forms of
   * the same identifier, e.g. a JT808 terminal number without its leading zeros) that a device has;
   * anything but an active device is recorded as a sighting (an unknown one under `identifier`, as
   * the tracker sent it). An identifier no device can have is refused before it reaches storage (and
   * is not recorded). Rejects when storage fails: the caller must not acknowledge anything then.
   */
  resolve(
    identifier: string,
    protocol: string,
    remoteAddress: string | null,
    alternatives?: readonly string[],
  ): Promise<Resolution>;
  /** The device with this id, whatever its state, without recording a sighting (cached like resolve). */
  find(identifier: string): Promise<DeviceRecord | undefined>;
  /**
   * Records that the device was heard now, on `protocol`: written at once when its last write is
   * LAST_CONNECTION_EVERY_MS old or more (a device heard after a gap), or its protocol changed;
   * otherwise the newest time waits for the next sweep, at most LAST_CONNECTION_EVERY_MS.
   */
  touch(device: DeviceRecord, protocol: string): Promise<void>;
  /** Writes the sightings gathered since the last flush (also done every few seconds). */
  flush(): Promise<void>;
  /** The `limit` (default 100) most recent sightings: every one for operators; with `scope`, only those of an account's devices. */
  recentUnknown(limit?: number, scope?: unknown.SightingScope): Promise<unknown.UnknownDevice[]>;
  /** What it holds in memory: cached device records and the last-connection times it remembers. */
  held(): { records: number; touched: number };
  /** Stops listening for changes and the flush timer, then writes what is pending. */
  close(): Promise<void>;
}

/**
 * A device's lastConnection is at most this far behind the last frame it sent: the Offline rule
 * (evaluated every 5 s, from minutes) and its "last at" time read it. Written once a minute, it
 * was up to a minute stale: an Offline rule quoted a time long before the device's last frame,
 * and one of a minute could fire while heartbeats still arrived. A device that reports less
 * often than this (most trackers) has each report written; one that reports more often, one write
 * per interval, with its newest time.
 */
export const LAST_CONNECTION_EVERY_MS = 5000;
const NOTHING_TO_DO: Promise<void> = Promise.resolve();

export function createDeviceDirectory(o: DirectoryOptions): DeviceDirectory {
  const records = recordCache(o);
  const connections = lastConnections(o);
  const sightings = unknownSightings(o);
  const offDeviceChanged = o.events.onDeviceChanged((id) => {
    records.forget(id);
    connections.forget(id);
  });

  async function resolve(
    identifier: string,
    protocol: string,
    remoteAddress: string | null,
    alternatives: readonly string[] = [],
  ): Promise<Resolution> {
    const problem = identifierProblem(identifier);
    if (problem) return { status: 'invalid', reason: problem };
    let device = await records.lookup(identifier);
    for (let i = 0; !device && i < alternatives.length; i++) {
      const other = alternatives[i];
      if (other !== identifier && !identifierProblem(other)) device = await records.lookup(other);
    }
    if (!device) {
      sightings.note(identifier, protocol, 'unknown', remoteAddress);
      return { status: 'unknown' };
    }
    if (isExpired(device, o.clock.now().getTime())) {
      sightings.note(device.id, protocol, 'expired', remoteAddress);
      return { status: 'expired' };
    }
    return { status: 'ok', device };
  }

  const timer = setInterval(
    () => {
      records.sweep();
      connections.sweep();
      void connections.writeLater();
      void sightings.flush();
    },
    Math.min(o.flushMs ?? 5000, LAST_CONNECTION_EVERY_MS),
  );
  timer.unref();

  return {
    resolve,
    find: records.lookup,
    touch: connections.touch,
    flush: sightings.flush,
    held: () => ({ records: records.size(), touched: connections.size() }),
    recentUnknown: async (limit = 100, scope) => {
      await sightings.flush();
      return unknown.recent(o.db, limit, scope);
    },
    async close() {
      offDeviceChanged();
      clearInterval(timer);
      await connections.writeLater();
      await sightings.flush();
    },
  };
}

/**
 * Device records by identifier, each kept cacheMs. The sweep forgets what no lookup may use any
 * more (without it, every device that ever logged in stayed in memory: after a storm of 100,000
 * trackers logging in through the gateway processes the core held 100,000 records it would never
 * answer from).
 */
function recordCache(o: DirectoryOptions) {
  const cacheMs = o.cacheMs ?? 5000;
  const cache = new Map<string, { at: number; device: DeviceRecord | undefined }>();
  // Moves with every change announced: a lookup that overlapped one is not cached (it may have read the old record).
  let epoch = 0;

  async function lookup(identifier: string): Promise<DeviceRecord | undefined> {
    const now = o.clock.now().getTime();
    const hit = cache.get(identifier);
    if (hit && now - hit.at < cacheMs) return hit.device;
    const readAt = epoch;
    const device = await devices.lookup(o.db, identifier);
    if (readAt !== epoch) return device;
    if (cache.size > 200_000) cache.clear();
    cache.set(identifier, { at: now, device });
    return device;
  }

  return {
    lookup,
    forget(id: string): void {
      epoch++;
      cache.delete(id);
    },
    sweep(): void {
      const now = o.clock.now().getTime();
      for (const [id, hit] of cache) if (now - hit.at >= cacheMs) cache.delete(id);
    },
    size: () => cache.size,
  };
}

/** Each device's last connection, written at most every LAST_CONNECTION_EVERY_MS (DeviceDirectory.touch). */
function lastConnections(o: DirectoryOptions) {
  /** when each device's last connection was last written (the devices written in the last LAST_CONNECTION_EVERY_MS) */
  const touched = new Map<string, number>();
  /** devices heard since their last write, written with the next sweep: the newest time each */
  const later = new Map<string, { device: DeviceRecord; protocol: string; atMs: number }>();
  const write = touchWriter(o);

  /** Not async: on almost every frame there is nothing to do, and that costs no promise of its own. */
  function touch(device: DeviceRecord, protocol: string): Promise<void> {
    const now = o.clock.now().getTime();
    const written = touched.get(device.id);
    if (written === undefined || now - written >= LAST_CONNECTION_EVERY_MS || device.protocol !== protocol) {
      later.delete(device.id);
      return record(device, protocol, now, now);
    }
    later.set(device.id, { device, protocol, atMs: now });
    return NOTHING_TO_DO;
  }

  /** The newest times of the devices heard since their last write (the sweep's, and a stop's). */
  function writeLater(): Promise<void> {
    if (later.size === 0) return NOTHING_TO_DO;
    const now = o.clock.now().getTime();
    const due = [...later.values()];
    later.clear();
    return Promise.all(due.map((t) => record(t.device, t.protocol, t.atMs, now))).then(() => undefined);
  }

  /** Writes `atMs` (when the device was heard) as its last connection, with the group commit; `now`: when. */
  function record(device: DeviceRecord, protocol: string, atMs: number, now: number): Promise<void> {
    touched.set(device.id, now);
    // The cached record is the one the gateway holds: keep it in step, or every frame would touch again.
    device.protocol = protocol;
    device.lastConnection = atMs;
    return write(device.id, protocol, atMs);
  }

  return {
    touch,
    writeLater,
    forget: (id: string) => touched.delete(id),
    /** forgets last connections recorded LAST_CONNECTION_EVERY_MS ago or more (the next touch writes anyway) */
    sweep(): void {
      const now = o.clock.now().getTime();
      for (const [id, at] of touched) if (now - at >= LAST_CONNECTION_EVERY_MS) touched.delete(id);
    },
    size: () => touched.size,
  };
}

/**
 * Last connections are written like a group commit: what arrives while a write runs goes in the
 * next one, in one transaction, so a login storm (thousands of trackers reconnecting after a
 * restart) costs a few commits, not one per tracker. Resolves once written (or failed and logged).
 */
function touchWriter(o: DirectoryOptions): (id: string, protocol: string, atMs: number) => Promise<void> {
  const touches = new Map<string, { protocol: string; atMs: number }>();
  let waiting: (() => void)[] = [];
  let writing = false;

  async function writeTouches(): Promise<void> {
    writing = true;
    // what else arrives in this turn of the event loop joins the first write; under a login storm
    // the next write takes everything that arrived while this one ran. (Not later: a tracker's
    // acknowledgement follows its commit, and by then its last connection is written too.)
    await new Promise((r) => setImmediate(r));
    while (touches.size > 0) {
      const batch = [...touches].map(([id, t]) => ({ id, ...t }));
      touches.clear();
      const done = waiting;
      waiting = [];
      await devices
        .touchConnections(o.db, batch)
        .catch((e) => o.logger.warn({ err: e, devices: batch.length }, 'recording last connection failed'));
      for (const resolve of done) resolve();
    }
    writing = false;
  }

  return (id, protocol, atMs) => {
    touches.set(id, { protocol, atMs });
    return new Promise<void>((resolve) => {
      waiting.push(resolve);
      if (!writing) void writeTouches();
    });
  };
}

/** Identifiers that named no device (or an expired one), gathered and written in batches. */
function unknownSightings(o: DirectoryOptions) {
  const pending = new Map<string, unknown.Sighting>();

  function note(
    identifier: string,
    protocol: string,
    reason: 'unknown' | 'expired',
    remoteAddress: string | null,
  ): void {
    const now = o.clock.now().getTime();
    const key = `${identifier}\u0000${protocol}`;
    const s = pending.get(key);
    if (s) {
      s.lastSeen = now;
      s.attempts++;
      s.remoteAddress = remoteAddress;
      s.reason = reason;
    } else if (pending.size < 10_000) {
      pending.set(key, { identifier, protocol, reason, remoteAddress, firstSeen: now, lastSeen: now, attempts: 1 });
    }
  }

  async function flush(): Promise<void> {
    if (pending.size === 0) return;
    const batch = [...pending.values()];
    pending.clear();
    await unknown
      .upsertMany(o.db, batch)
      .catch((e) => o.logger.warn({ err: e }, 'recording unknown identifiers failed'));
  }

  return { note, flush };
}
