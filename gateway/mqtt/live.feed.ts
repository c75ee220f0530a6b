/**
 * The live feed (docs/contract.md §3 "MQTT"): every stored location and alert, published as its REST
 * JSON on `live/{deviceId}/...`, delivered only to API users who may see the device.
 * The scope travels on the packet as MQTT 5 user properties (`tg-account`, `tg-groups`), so it
 * survives any aedes emitter, including Redis. A live packet without them is never delivered; they
 * are stripped before writing. Delivery goes through each subscriber's outbox (live.outbox.ts),
 * marked with this process's `tg-release` secret so that authorizeForward lets it pass.
 */
import { randomBytes } from 'node:crypto';
import type { Aedes, AedesPublishPacket, PublishPacket } from 'aedes';
import type { EventBus } from '../../core/events/event-bus.js';
import type { Logger } from '../../core/logger.js';
import type { Clock } from '../../core/clock.js';
import type { Principal } from '../../core/model/user.js';
import type { GroupsService } from '../../core/groups/groups.service.js';
import { liveTopic, UNKNOWN_FRAMES_TOPIC, type LiveFeedName } from './mqtt.topics.js';
import type { LiveOutbox } from './live.outbox.js';
import type { FrameTap, LiveFrame } from '../shared/frame-tap.js';

const ACCOUNT = 'tg-account';
const GROUPS = 'tg-groups';
const RELEASE = 'tg-release';
/** marks a frame of an identifier that matches no device: for admins of no group only */
const UNKNOWN = 'tg-unknown';

/**
 * Who sees `live/unknown/frames`: admins not restricted to a group. Such an identifier belongs to
 * no account (as /api/unknownDevices says), and the contract gives its frames to admins, for the
 * technician installing a tracker not registered yet.
 */
export function seesUnknownFrames(p: Principal): boolean {
  return p.privileges.has('admin') && p.groupId === null;
}
const GROUP_CACHE_MS = 5000;

export interface LiveFeedDeps {
  broker: Aedes;
  events: EventBus;
  logger: Logger;
  clock: Clock;
  /** which devices the groups of group-restricted users hold */
  groups: Pick<GroupsService, 'includesDevice'>;
  /** the tracker listeners' raw frames (live/{deviceId}/frames) */
  frames?: FrameTap;
}

/** A connected API user, as the feed needs it. */
export interface LiveSubscriber {
  principal: Principal;
  readonly closed: boolean;
  /** it subscribed to a filter matching `live/…/frames` */
  readonly wantsFrames: boolean;
  /** where its live packets wait for its socket */
  readonly outbox: LiveOutbox;
}

/** The live feed of stored locations and alerts, scoped per API user (docs/contract.md §3 "live/…"). */
export interface LiveFeed {
  /** a connected API user starts receiving its account's feed */
  add(subscriber: LiveSubscriber): void;
  /** the user's connection ended */
  remove(subscriber: LiveSubscriber): void;
  /** authorizeForward for a live packet: queue it in the subscriber's outbox, or let a released one through */
  forward(subscriber: LiveSubscriber, packet: AedesPublishPacket): AedesPublishPacket | null;
  stop(): void;
}

/** The connected API users by account, and which of them want what (cheap: asked for every stored item and frame). */
function subscriberRegistry() {
  /** accountId -> its connected API users */
  const subscribers = new Map<string, Set<LiveSubscriber>>();

  function add(s: LiveSubscriber): void {
    const set = subscribers.get(s.principal.accountId) ?? new Set();
    set.add(s);
    subscribers.set(s.principal.accountId, set);
  }

  function remove(s: LiveSubscriber): void {
    const set = subscribers.get(s.principal.accountId);
    if (!set) return;
    set.delete(s);
    if (set.size === 0) subscribers.delete(s.principal.accountId);
  }

  /** The groups of this account's connected group-restricted users; null: nobody to deliver to. */
  function audienceGroups(accountId: string): string[] | null {
    const set = subscribers.get(accountId);
    if (!set) return null;
    const groups = new Set<string>();
    for (const s of set) {
      if (s.closed) set.delete(s);
      else if (s.principal.groupId) groups.add(s.principal.groupId);
    }
    if (set.size === 0) {
      subscribers.delete(accountId);
      return null;
    }
    return [...groups];
  }

  /** Whether a connected API user listens to frames of this account (null: of unknown identifiers). Cheap: called for every frame. */
  function wantsFrames(accountId: string | null): boolean {
    if (accountId !== null) {
      for (const s of subscribers.get(accountId) ?? []) if (s.wantsFrames && !s.closed) return true;
      return false;
    }
    for (const set of subscribers.values())
      for (const s of set) if (s.wantsFrames && !s.closed && seesUnknownFrames(s.principal)) return true;
    return false;
  }

  /** The accounts whose frames connected API users want, and whether an admin wants unknown identifiers' (announced to other instances). */
  function framesInterest(): { accounts: string[]; unknown: boolean } {
    const accounts: string[] = [];
    let unknown = false;
    for (const [accountId, set] of subscribers) {
      let wanted = false;
      for (const s of set) {
        if (!s.wantsFrames || s.closed) continue;
        wanted = true;
        unknown ||= seesUnknownFrames(s.principal);
      }
      if (wanted) accounts.push(accountId);
    }
    return { accounts, unknown };
  }

  return { add, remove, audienceGroups, wantsFrames, framesInterest, clear: () => subscribers.clear() };
}
type SubscriberRegistry = ReturnType<typeof subscriberRegistry>;

/**
 * deviceId -> groupId -> whether the group holds the device; forgotten when the device changes
 * (a group edit names the devices that joined or left it), and after GROUP_CACHE_MS for
 * instances that share only the database (no event relay).
 */
function groupMembership(groupsService: LiveFeedDeps['groups'], clock: Clock) {
  const membership = new Map<string, Map<string, { at: number; inGroup: boolean }>>();
  let memberships = 0;

  async function inGroup(deviceId: string, groupId: string): Promise<boolean> {
    const now = clock.now().getTime();
    const hit = membership.get(deviceId)?.get(groupId);
    if (hit && now - hit.at < GROUP_CACHE_MS) return hit.inGroup;
    const value = await groupsService.includesDevice(groupId, deviceId);
    if (memberships > 100_000) {
      membership.clear();
      memberships = 0;
    }
    let groups = membership.get(deviceId);
    if (!groups) membership.set(deviceId, (groups = new Map()));
    if (!groups.has(groupId)) memberships++;
    groups.set(groupId, { at: now, inGroup: value });
    return value;
  }

  function forget(deviceId: string): void {
    memberships -= membership.get(deviceId)?.size ?? 0;
    membership.delete(deviceId);
  }

  return { inGroup, forget };
}

/** A live packet of the feed, QoS 0, not retained. */
function livePacket(
  topic: string,
  payload: PublishPacket['payload'],
  userProperties: Record<string, string | string[]>,
): PublishPacket {
  return { cmd: 'publish', topic, payload, qos: 0, retain: false, dup: false, properties: { userProperties } };
}

/** Publishes stored items and frames to the broker, each carrying the scope `forward` checks. */
function livePublisher(deps: LiveFeedDeps, registry: SubscriberRegistry, groups: ReturnType<typeof groupMembership>) {
  const { broker, logger } = deps;
  /** accountId -> the tail of its publishes that wait for a group lookup (order kept per account) */
  const tails = new Map<string, Promise<void>>();

  function publish(
    accountId: string,
    deviceId: string,
    feed: LiveFeedName,
    body: () => unknown,
    holding: string[],
  ): void {
    const packet = livePacket(liveTopic(deviceId, feed), Buffer.from(JSON.stringify(body())), {
      [ACCOUNT]: accountId,
      [GROUPS]: holding,
    });
    broker.publish(packet, (err) => {
      if (err) logger.warn({ err, topic: packet.topic }, 'live feed: publishing failed');
    });
  }

  /** `body` is read only when someone may see it (a location a gateway process sent is parsed only then). */
  function offer(accountId: string, deviceId: string, feed: LiveFeedName, body: () => unknown): void {
    const audience = registry.audienceGroups(accountId);
    if (audience === null) return;
    const tail = tails.get(accountId);
    if (audience.length === 0 && !tail) {
      publish(accountId, deviceId, feed, body, []);
      return;
    }
    const next = (tail ?? Promise.resolve())
      .then(async () => {
        const holding: string[] = [];
        for (const g of audience) if (await groups.inGroup(deviceId, g)) holding.push(g);
        publish(accountId, deviceId, feed, body, holding);
      })
      .catch((err) =>
        logger.warn({ err, deviceId }, 'live feed: group lookup failed; not delivered to group-restricted users'),
      );
    tails.set(accountId, next);
    void next.then(() => {
      if (tails.get(accountId) === next) tails.delete(accountId);
    });
  }

  function offerFrame(accountId: string | null, deviceId: string | null, frame: LiveFrame): void {
    if (accountId !== null && deviceId !== null) return offer(accountId, deviceId, 'frames', () => frame);
    broker.publish(livePacket(UNKNOWN_FRAMES_TOPIC, Buffer.from(JSON.stringify(frame)), { [UNKNOWN]: '1' }), (err) => {
      if (err) logger.warn({ err }, 'live feed: publishing an unknown frame failed');
    });
  }

  return { offer, offerFrame };
}

/** Whether this user may see a live packet, by the scope it carries. */
function mayReceive(principal: Principal, packet: AedesPublishPacket): boolean {
  const props = packet.properties?.userProperties;
  const account = props?.[ACCOUNT];
  if (props?.[UNKNOWN] === '1' && packet.topic === UNKNOWN_FRAMES_TOPIC) return seesUnknownFrames(principal);
  if (typeof account !== 'string' || account !== principal.accountId) return false;
  if (!principal.groupId) return true;
  const groups = props?.[GROUPS];
  const list = Array.isArray(groups) ? groups : typeof groups === 'string' ? [groups] : [];
  return list.includes(principal.groupId);
}

/**
 * authorizeForward for a live packet. A packet of the feed this user may see is queued in its
 * outbox (null: aedes writes nothing and its delivery slot comes back at once); a packet the
 * outbox releases is answered bare, to be written; anything else null.
 */
function forwardLive(
  subscriber: LiveSubscriber,
  packet: AedesPublishPacket,
  releaseSecret: string,
): AedesPublishPacket | null {
  if (packet.properties?.userProperties?.[RELEASE] === releaseSecret) {
    const { properties: _mark, ...bare } = packet;
    return bare as AedesPublishPacket;
  }
  if (!mayReceive(subscriber.principal, packet)) return null;
  subscriber.outbox.push(livePacket(packet.topic, packet.payload, { [RELEASE]: releaseSecret }));
  return null;
}

export function startLiveFeed(deps: LiveFeedDeps): LiveFeed {
  const { events } = deps;
  const registry = subscriberRegistry();
  const groups = groupMembership(deps.groups, deps.clock);
  const { offer, offerFrame } = livePublisher(deps, registry, groups);
  /** marks the packets an outbox writes: only this process knows it */
  const releaseSecret = randomBytes(16).toString('hex');

  const offs = [
    events.onLocations((items) => {
      for (const i of items) offer(i.accountId, i.deviceId, 'locations', () => i.location);
    }),
    events.onAlert((i) => offer(i.accountId, i.deviceId, 'alerts', () => i.alert)),
    events.onCommandChanged((i) => offer(i.accountId, i.deviceId, 'commands', () => i.command)),
    ...(deps.frames
      ? [deps.frames.attach({ wants: registry.wantsFrames, offer: offerFrame, interest: registry.framesInterest })]
      : []),
    events.onDeviceChanged((deviceId) => groups.forget(deviceId)),
  ];

  return {
    add: registry.add,
    remove: registry.remove,
    forward: (subscriber, packet) => forwardLive(subscriber, packet, releaseSecret),
    stop(): void {
      for (const off of offs) off();
      registry.clear();
    },
  };
}
