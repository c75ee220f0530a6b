/**
 * What a device's PUBLISH becomes, run inside aedes' authorizePublish. aedes 1.2 writes the QoS 1
 * PUBACK right after authorizePublish calls back (lib/handlers/publish.js), and PUBREC of QoS 2
 * after it too, so the hand-off to the core happens here and the callback waits for the commit:
 *
 * - stored                 -> callback()          : PUBACK follows the commit
 * - storage failed         -> callback(error)     : no ack, the connection closes (MQTT-3.3.5-2
 *                                                   has no negative ack), the client resends
 * - malformed on own topic -> callback()          : acked and counted, never stored, so a device
 *                                                   does not resend it forever
 * - another device's topic -> callback(error)     : refused, the connection closes
 *
 * A client's publishes are handed to the core in the order they arrived (one chain per client);
 * their commits still share the ingest's group commit.
 */
import type { Client, PublishPacket } from 'aedes';
import type { DeviceDirectory } from '../../core/devices/device-directory.js';
import type { IngestService } from '../../core/ingest/ingest.service.js';
import type { AlertsService } from '../../core/alerts/alerts.service.js';
import type { DeviceRecord } from '../../core/model/device.js';
import type { Logger } from '../../core/logger.js';
import type { Identity } from './mqtt.auth.js';
import { PROTOCOL } from './mqtt.auth.js';
import { routeDevicePublish, type DevicePublishRoute } from './mqtt.topics.js';
import { parseAlerts, parseJson, parseLocations, excerpt } from './mqtt.payloads.js';
import { decodeOwnTracks } from './owntracks.decoder.js';
import { PublishBucket, Semaphore, sleep } from './publish.limits.js';

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

/** Per connected client: who it is, and its publish order and rate. */
export interface ClientState {
  identity: Identity;
  bucket: PublishBucket;
  tail: Promise<unknown>;
  remoteAddress: string | null;
}

export interface PublishDeps {
  directory: DeviceDirectory;
  ingest: IngestService;
  alerts: AlertsService;
  logger: Logger;
  /** messages handed to the core and not yet committed, over all clients */
  pending: Semaphore;
}

type Work =
  | { kind: 'store'; run: (d: DeviceRecord) => Promise<number> }
  | { kind: 'ignored'; what: string }
  | { kind: 'rejected'; reason: string };

class Refused extends Error {}

export function createPublishHandler(deps: PublishDeps) {
  const { directory, ingest, alerts, logger, pending } = deps;
  const stats: PublishStats = { accepted: 0, rejected: 0, ignored: 0, refused: 0, failed: 0 };

  /** Decodes the payload for its route (synchronously, so work keeps arrival order). */
  function plan(route: DevicePublishRoute, payload: Buffer): Work {
    switch (route.kind) {
      case 'locations': {
        const p = parseLocations(payload);
        if (!p.ok) return { kind: 'rejected', reason: p.reason };
        return { kind: 'store', run: (d) => ingest.submitLocations(d, PROTOCOL, p.value) };
      }
      case 'alerts': {
        const p = parseAlerts(payload);
        if (!p.ok) return { kind: 'rejected', reason: p.reason };
        return {
          kind: 'store',
          run: async (d) => {
            // QoS 1 is at-least-once: a resent alert must not be raised twice
            for (const a of p.value) await alerts.record(d, a, { dedupe: true });
            return p.value.length;
          },
        };
      }
      case 'owntracks': {
        const json = parseJson(payload);
        if (!json.ok) return { kind: 'rejected', reason: json.reason };
        const decoded = decodeOwnTracks(json.value, route.phone);
        const bad = decoded.find((d) => d.kind === 'malformed');
        if (bad && bad.kind === 'malformed') return { kind: 'rejected', reason: bad.reason };
        const reports = decoded.flatMap((d) => (d.kind === 'location' ? [d.report] : []));
        if (reports.length === 0) return { kind: 'ignored', what: decoded.map((d) => (d.kind === 'ignored' ? d.type : '')).join(',') };
        return { kind: 'store', run: async (d) => (await ingest.submit(d, OWNTRACKS_PROTOCOL, reports)).locations };
      }
      case 'owntracks-other':
        return { kind: 'ignored', what: route.subtopic };
    }
  }

  async function currentDevice(state: ClientState, protocol: string): Promise<DeviceRecord> {
    const id = state.identity as Extract<Identity, { kind: 'device' }>;
    const r = await directory.resolve(id.deviceId, protocol, state.remoteAddress);
    if (r.status !== 'ok') throw new Refused(`device ${r.status}`);
    // a new MQTT password ends the sessions opened with the old one
    if (r.device.mqttPasswordHash !== id.passwordHash) throw new Refused('device credentials changed');
    return r.device;
  }

  /**
   * authorizePublish for a client with an identity. A will (published while its client closes)
   * goes the same way; wills of unknown clients are handled by the gateway.
   */
  function authorize(client: Client, state: ClientState, packet: PublishPacket, callback: (error?: Error | null) => void): void {
    const identity = state.identity;
    const refuse = (reason: string) => {
      stats.refused++;
      logger.warn({ clientId: client.id, topic: packet.topic, reason }, 'mqtt: publish refused; closing the connection');
      callback(new Error(`publish refused: ${reason}`));
    };
    if (identity.kind !== 'device') return refuse('API users may only subscribe');
    const route = routeDevicePublish(packet.topic, identity.deviceId);
    if (!route) return refuse('not one of the device topics');
    // Device messages are stored, not kept: no retained copy in the broker (OwnTracks retains by default).
    packet.retain = false;

    const wait = client.closed ? 0 : state.bucket.take();
    if (wait < 0) return refuse('publish rate exceeded');
    const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
    const work = plan(route, payload);
    if (work.kind === 'rejected') {
      stats.rejected++;
      logger.warn({ deviceId: identity.deviceId, topic: packet.topic, reason: work.reason, payload: excerpt(payload) }, 'mqtt: malformed message acknowledged and not stored');
      return callback(null);
    }
    const protocol = route.kind === 'owntracks' ? OWNTRACKS_PROTOCOL : PROTOCOL;

    // In arrival order: throttle, check the device is still active, take a slot, hand over.
    const started = state.tail.then(async () => {
      if (wait > 0) await sleep(wait);
      if (work.kind === 'ignored') return { done: Promise.resolve(0) };
      const device = await currentDevice(state, protocol);
      await pending.acquire();
      const done = work.run(device).finally(() => pending.release());
      void directory.touch(device, protocol);
      return { done };
    });
    state.tail = started.catch(() => undefined);
    started
      .then((s) => s.done)
      .then(
        () => {
          if (work.kind === 'ignored') stats.ignored++;
          else stats.accepted++;
          callback(null);
        },
        (err: unknown) => {
          if (err instanceof Refused) return refuse(err.message);
          stats.failed++;
          logger.error({ err, deviceId: identity.deviceId, topic: packet.topic }, 'mqtt: storing failed; not acknowledged, closing the connection');
          callback(err instanceof Error ? err : new Error(String(err)));
        },
      );
  }

  return { authorize, stats };
}
