/**
 * What a device's PUBLISH becomes, run inside aedes' authorizePublish. aedes writes PUBACK (QoS 1)
 * and PUBREC (QoS 2) as soon as authorizePublish calls back, so the callback waits for the commit.
 * Storage failed, or another device's topic: callback(error), the connection closes and the client
 * resends (MQTT 3.1.1 has no negative ack). Malformed on its own topic: acked, counted, not stored,
 * so the device does not resend it forever. One chain per client keeps its publishes in order.
 */
import type { Client, PublishPacket } from 'aedes';
import type { DeviceDirectory } from '../../core/devices/device-directory.js';
import type { IngestResult, IngestService } from '../../core/ingest/ingest.service.js';
import { alertReport, locationReport } from '../../core/model/input.reports.js';
import type { DeviceRecord } from '../../core/model/device.js';
import type { Logger } from '../../core/logger.js';
import type { MqttCounts } from '../../core/metrics/counts.js';
import type { Identity } from './mqtt.auth.js';
import type { Session } from './mqtt.sessions.js';
import { PROTOCOL } from './mqtt.auth.js';
import { routeDevicePublish, type DevicePublishRoute } from './mqtt.topics.js';
import { parseAlerts, parseCommandResults, parseJson, parseLocations, excerpt } from './mqtt.payloads.js';
import { decodeOwnTracks } from '../../protocols/owntracks/owntracks.decoder.js';
import { type Semaphore, sleep } from './publish.limits.js';

export const OWNTRACKS_PROTOCOL = 'owntracks';

export interface PublishStats {
  /** messages stored */
  accepted: number;
  /** malformed messages on an allowed topic: acked, not stored */
  rejected: number;
  /** valid messages with nothing to store (OwnTracks lwt, card, transition, …) */
  ignored: number;
  /** publishes refused (not the client's topic, API user, rate, device gone): connection closed */
  refused: number;
  /** storage failed: not acknowledged, connection closed, the client resends */
  failed: number;
}

export interface PublishDeps {
  directory: DeviceDirectory;
  ingest: Pick<IngestService, 'submit'>;
  logger: Logger;
  /** messages handed to the core and not yet committed, over all clients */
  pending: Semaphore;
  /** a device's answers to its commands (mqtt.commands.ts), recorded before the PUBACK */
  commandResults?(deviceId: string, results: { id: number; result: string }[]): Promise<void>;
  /** publishes by topic kind, for GET /metrics; absent: metrics are off */
  counts?: MqttCounts;
}

type Work =
  | { kind: 'store'; run: (d: DeviceRecord) => Promise<number> }
  | { kind: 'ignored'; what: string }
  | { kind: 'rejected'; reason: string };

class Refused extends Error {}

// Made outside createPublishHandler's closures (see handOver): what waits for a commit holds these, not a message's reports.
const commitOf = (step: { committed: Promise<number> }): Promise<number> => step.committed;
const raisedAlerts = (r: IngestResult): number => r.alerts.length;
const locationsWritten = (r: IngestResult): number => r.locations.length;
/** How many locations a device's message stored; a refusal (the message fails the checks) is logged. */
const storedLocations =
  (logger: Logger, d: DeviceRecord) =>
  (r: IngestResult): number => {
    if (r.refused)
      logger.warn(
        {
          deviceId: d.id,
          protocol: PROTOCOL,
          index: r.refused.index,
          field: r.refused.field,
          reason: r.refused.message,
        },
        'locations refused: they fail the checks',
      );
    return r.locations.length;
  };

/** What becomes of a device's PUBLISH (see the file's comment). */
export interface PublishHandler {
  /**
   * authorizePublish for a client with a session, settled as the table above says. A will
   * (published while its client closes) goes the same way; wills of clients no longer connected
   * are handled in mqtt.authorize-publish.ts.
   */
  authorize(client: Client, session: Session, packet: PublishPacket, callback: (error?: Error | null) => void): void;
  /** What became of the publishes so far, counted as they settle. */
  readonly stats: Readonly<PublishStats>;
}

/** OwnTracks JSON to work: one malformed message rejects the publish, one with no location is ignored. */
function planOwnTracks(ingest: PublishDeps['ingest'], payload: Buffer, phone: string): Work {
  const json = parseJson(payload);
  if (!json.ok) return { kind: 'rejected', reason: json.reason };
  const decoded = decodeOwnTracks(json.value, phone);
  const bad = decoded.find((d) => d.kind === 'malformed');
  if (bad && bad.kind === 'malformed') return { kind: 'rejected', reason: bad.reason };
  const reports = decoded.flatMap((d) => (d.kind === 'location' ? [d.report] : []));
  if (reports.length === 0)
    return { kind: 'ignored', what: decoded.map((d) => (d.kind === 'ignored' ? d.type : '')).join(',') };
  return { kind: 'store', run: (d) => ingest.submit(d, OWNTRACKS_PROTOCOL, reports).then(locationsWritten) };
}

function planCommandResults(deps: PublishDeps, payload: Buffer): Work {
  const p = parseCommandResults(payload);
  if (!p.ok) return { kind: 'rejected', reason: p.reason };
  const record = deps.commandResults;
  if (!record) return { kind: 'ignored', what: 'commandResults' };
  return {
    kind: 'store',
    run: async (d) => {
      await record(d.id, p.value);
      return p.value.length;
    },
  };
}

/**
 * Decodes the payload for its route into the core's reports (synchronously, so work keeps
 * arrival order). QoS 1 is at least once: the ingest raises a resent alert only once.
 */
function plan(deps: PublishDeps, route: DevicePublishRoute, payload: Buffer): Work {
  const { ingest, logger } = deps;
  switch (route.kind) {
    case 'locations': {
      const p = parseLocations(payload);
      if (!p.ok) return { kind: 'rejected', reason: p.reason };
      const reports = p.value.map(locationReport);
      // One message is one unit, as one REST request is: acknowledged, and refused whole.
      return {
        kind: 'store',
        run: (d) => ingest.submit(d, PROTOCOL, reports, { allOrNothing: true }).then(storedLocations(logger, d)),
      };
    }
    case 'alerts': {
      const p = parseAlerts(payload);
      if (!p.ok) return { kind: 'rejected', reason: p.reason };
      const reports = p.value.map(alertReport);
      return { kind: 'store', run: (d) => ingest.submit(d, PROTOCOL, reports).then(raisedAlerts) };
    }
    case 'commandResults':
      return planCommandResults(deps, payload);
    case 'owntracks':
      return planOwnTracks(ingest, payload, route.phone);
    case 'owntracks-other':
      return { kind: 'ignored', what: route.subtopic };
  }
}

async function currentDevice(directory: DeviceDirectory, session: Session, protocol: string): Promise<DeviceRecord> {
  const id = session.identity as Extract<Identity, { kind: 'device' }>;
  const r = await directory.resolve(id.deviceId, protocol, session.remoteAddress);
  if (r.status !== 'ok') throw new Refused(`device ${r.status}`);
  // a new MQTT password ends the sessions opened with the old one
  if (r.device.mqttPasswordHash !== id.passwordHash) throw new Refused('device credentials changed');
  return r.device;
}

/**
 * Runs `step` once the client's previous step has run, so publishes reach the core in arrival
 * order; the next step does not wait for what this one answers (a commit) to settle.
 */
function inArrivalOrder<T>(session: Session, step: () => Promise<T>): Promise<T> {
  const run = session.tail.then(step);
  session.tail = run.catch(() => undefined);
  return run;
}

/**
 * Throttles, checks the device is still active, takes a slot and hands over; settles with the
 * commit. Not an async function, and nothing that waits for the commit refers to `work`: its
 * reports (held by `run`) are garbage once the ingest has made rows of them.
 */
function handOver(
  deps: PublishDeps,
  releaseSlot: () => void,
  session: Session,
  work: Exclude<Work, { kind: 'rejected' }>,
  protocol: string,
  waitMs: number,
): Promise<unknown> {
  const { directory, pending } = deps;
  return inArrivalOrder(session, async () => {
    if (waitMs > 0) await sleep(waitMs);
    if (work.kind === 'ignored') return { committed: Promise.resolve(0) };
    const device = await currentDevice(directory, session, protocol);
    await pending.acquire();
    const committed = work.run(device).finally(releaseSlot);
    void directory.touch(device, protocol);
    return { committed };
  }).then(commitOf);
}

export function createPublishHandler(deps: PublishDeps): PublishHandler {
  const { logger, pending } = deps;
  const stats: PublishStats = { accepted: 0, rejected: 0, ignored: 0, refused: 0, failed: 0 };
  /** made here, not in handOver: a closure made there would keep handOver's `work` until the commit */
  const releaseSlot = (): void => pending.release();

  function authorize(
    client: Client,
    session: Session,
    packet: PublishPacket,
    callback: (error?: Error | null) => void,
  ): void {
    const identity = session.identity;
    const refuse = (reason: string) => {
      stats.refused++;
      logger.warn(
        { clientId: client.id, topic: packet.topic, reason },
        'mqtt: publish refused; closing the connection',
      );
      callback(new Error(`publish refused: ${reason}`));
    };
    if (identity.kind !== 'device') return refuse('API users may only subscribe');
    const route = routeDevicePublish(packet.topic, identity.deviceId);
    if (!route) return refuse('not one of the device topics');
    deps.counts?.published(route.kind);
    // Device messages are stored, not kept: no retained copy in the broker (OwnTracks retains by default).
    packet.retain = false;

    const waitMs = client.closed ? 0 : session.bucket.take();
    if (waitMs < 0) return refuse('publish rate exceeded');
    const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
    const work = plan(deps, route, payload);
    if (work.kind === 'rejected') {
      stats.rejected++;
      logger.warn(
        { deviceId: identity.deviceId, topic: packet.topic, reason: work.reason, payload: excerpt(payload) },
        'mqtt: malformed message acknowledged and not stored',
      );
      return callback(null);
    }
    const protocol = route.kind === 'owntracks' ? OWNTRACKS_PROTOCOL : PROTOCOL;
    const ignored = work.kind === 'ignored';
    handOver(deps, releaseSlot, session, work, protocol, waitMs).then(
      () => {
        if (ignored) stats.ignored++;
        else stats.accepted++;
        callback(null);
      },
      (err: unknown) => {
        if (err instanceof Refused) return refuse(err.message);
        stats.failed++;
        logger.error(
          { err, deviceId: identity.deviceId, topic: packet.topic },
          'mqtt: storing failed; not acknowledged, closing the connection',
        );
        callback(err instanceof Error ? err : new Error(String(err)));
      },
    );
  }

  return { authorize, stats };
}
