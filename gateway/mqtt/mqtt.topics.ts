/**
 * The topic rules of docs/contract.md §3 "MQTT", as pure functions: which topic a device may publish
 * to, what a subscription becomes, and which device a topic is about. Topic levels are split on
 * '/', as MQTT 3.1.1 §4.7.1 defines them.
 */

/** What a device publish is, once its topic is checked against the device's own id. */
export type DevicePublishRoute =
  /** `devices/{id}/locations`: REST location objects */
  | { kind: 'locations' }
  /** `devices/{id}/alerts`: REST alert objects */
  | { kind: 'alerts' }
  /** `devices/{id}/commandResults`: `{id, result}` answers to commands (mqtt.commands.ts) */
  | { kind: 'commandResults' }
  /** `owntracks/{id}/{phone}`: `_type` location (stored), lwt and others (ignored) */
  | { kind: 'owntracks'; phone: string }
  /** `owntracks/{id}/{phone}/event|info|cmd|status|...`: accepted, never stored */
  | { kind: 'owntracks-other'; phone: string; subtopic: string };

export const LIVE_PREFIX = 'live/';
/** The live feeds (docs/contract.md §3 "live/…"). */
export type LiveFeedName = 'locations' | 'alerts' | 'commands' | 'frames';
export const liveTopic = (deviceId: string, feed: LiveFeedName): string => `live/${deviceId}/${feed}`;
/** Where an MQTT device receives its commands (docs/contract.md §3). */
export const commandsTopic = (deviceId: string): string => `devices/${deviceId}/commands`;

/** Whether a subscription filter matches a topic (MQTT 3.1.1 §4.7: `+` one level, `#` the rest). */
export function filterMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length || (f[i] !== '+' && f[i] !== t[i])) return false;
  }
  return f.length === t.length;
}

/** The route of a device's publish, or null when the topic is not one of its own. */
export function routeDevicePublish(topic: string, deviceId: string): DevicePublishRoute | null {
  const levels = topic.split('/');
  if (levels[1] !== deviceId) return null;
  if (levels[0] === 'devices' && levels.length === 3) {
    if (levels[2] === 'locations') return { kind: 'locations' };
    if (levels[2] === 'alerts') return { kind: 'alerts' };
    if (levels[2] === 'commandResults') return { kind: 'commandResults' };
    return null;
  }
  if (levels[0] === 'owntracks' && levels.length >= 3 && levels[2] !== '') {
    // the Mosquitto pattern `owntracks/%u/#`: the phone's base topic and its sub-topics
    if (levels.length === 3) return { kind: 'owntracks', phone: levels[2] };
    return { kind: 'owntracks-other', phone: levels[2], subtopic: levels.slice(3).join('/') };
  }
  return null;
}

/** The device a device topic (`devices/{id}/…`, `owntracks/{id}/…`) is about, else undefined. */
export function deviceOfTopic(topic: string): string | undefined {
  if (!topic.startsWith('devices/') && !topic.startsWith('owntracks/')) return undefined;
  const id = topic.split('/')[1];
  return id ? id : undefined;
}

/**
 * What a device's subscription filter becomes: its own `owntracks/{id}/…` and `devices/{id}/…`
 * filters as they are; a wildcard in the user level narrowed to its own id (OwnTracks subscribes
 * to `owntracks/+/+`, `owntracks/+/+/event`, `owntracks/+/+/info` by default: narrowed, not
 * refused, so the app works); anything else (other devices, `live/`, `$SYS`, `#`) null.
 */
export function narrowDeviceFilter(filter: string, deviceId: string): string | null {
  const levels = filter.split('/');
  if ((levels[0] !== 'owntracks' && levels[0] !== 'devices') || levels.length < 2) return null;
  if (levels[1] === '#') return `${levels[0]}/${deviceId}/#`;
  if (levels[1] === '+') levels[1] = deviceId;
  return levels[1] === deviceId ? levels.join('/') : null;
}

/** API users subscribe to the live feed only: `live/…` filters (scoped per packet on delivery). */
export function isLiveFilter(filter: string): boolean {
  return filter.startsWith(LIVE_PREFIX) && filter.length > LIVE_PREFIX.length;
}

/** The topic of frames whose identifier matches no device (admins only). */
export const UNKNOWN_FRAMES_TOPIC = 'live/unknown/frames';

/** Whether a `live/…` filter matches some `live/{deviceId}/frames` topic. */
export function matchesFrames(filter: string): boolean {
  const levels = filter.split('/');
  if (levels[0] !== 'live' || levels.length < 2) return false;
  if (levels[1] === '#') return true;
  if (levels.length === 3) return levels[2] === 'frames' || levels[2] === '+' || levels[2] === '#';
  return false;
}

/** Whether a filter names the unknown identifiers' frames by name (`live/unknown/…`), not by wildcard. */
export function namesUnknownFrames(filter: string): boolean {
  const levels = filter.split('/');
  return levels[0] === 'live' && levels[1] === 'unknown' && levels.length === 3 && matchesFrames(filter);
}
