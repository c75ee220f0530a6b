/**
 * Which devices are online, for GET /api/lastLocations: the device locator's sides on this instance
 * (tracker listeners, gateway processes and edge gateways: TCP; MQTT clients), and for a device
 * without a connection here, its last connection (docs/rest.md "The fleet" says what each status means).
 */
import type { DevicePresence, Transport } from '../core/model/presence.js';
import { PROTOCOL as MQTT_PROTOCOL } from '../gateway/mqtt/mqtt.auth.js';
import { getProtocol } from '../protocols/index.js';
import type { DeviceLocator } from './device-locator.js';

export interface PresenceOptions {
  /** TRACKGATE_IDLE_TIMEOUT: a connection silent this long is closed, so an older last connection is offline */
  idleTimeoutMs: number;
  /** PostgreSQL: other instances may hold devices' connections */
  sharedStorage: boolean;
  now: () => number;
  /** the MQTT devices with a client connected here (the locator's MQTT side holds only those that take commands) */
  mqttDevices?: () => string[];
}

/**
 * A presence over `locator`. A device whose connection here ended after it was last heard is
 * offline: tracker sides (this process, gateway processes, edge gateways) say when a connection
 * ends; for the others (MQTT, a gateway process lost with its connections) the end is seen by
 * comparing each answer's connections with the previous answer's.
 */
export function locatorPresence(
  locator: Pick<DeviceLocator, 'connectedDevices' | 'trackers' | 'onOffline'>,
  o: PresenceOptions,
) {
  let heldBefore = new Set<string>();
  /** when a connection held here ended (kept for the idle timeout, then it no longer matters) */
  const endedHere = new Map<string, number>();
  // tracker sides say so at once; the comparison below catches the rest (an MQTT client, a gateway process gone)
  locator.onOffline((deviceId) => {
    if (endedHere.size > 1_000_000) endedHere.clear();
    endedHere.set(deviceId, o.now());
  });

  function connectedHere(): Map<string, Transport> {
    const now = o.now();
    const out = new Map<string, Transport>();
    for (const id of locator.trackers.connectedDevices()) out.set(id, 'tcp');
    for (const id of locator.connectedDevices()) if (!out.has(id)) out.set(id, 'mqtt');
    for (const id of o.mqttDevices?.() ?? []) if (!out.has(id)) out.set(id, 'mqtt');
    for (const id of heldBefore) if (!out.has(id)) endedHere.set(id, now);
    for (const [id, at] of endedHere) if (now - at > o.idleTimeoutMs || out.has(id)) endedHere.delete(id);
    heldBefore = new Set(out.keys());
    return out;
  }

  function heardTransport(deviceId: string, protocol: string | null, lastConnectionMs: number): Transport | undefined {
    const ended = endedHere.get(deviceId);
    if (ended !== undefined && ended >= lastConnectionMs) return undefined;
    if (protocol === null) return undefined;
    if (protocol === MQTT_PROTOCOL || protocol === 'owntracks') return o.sharedStorage ? 'mqtt' : undefined;
    const transports = getProtocol(protocol)?.transports ?? [];
    if (transports.includes('http') && !transports.includes('tcp')) return 'http';
    if (o.sharedStorage && transports.includes('tcp')) return 'tcp';
    if (transports.includes('udp')) return 'udp';
    return undefined;
  }

  return { connectedHere, heardTransport, recentMs: o.idleTimeoutMs } satisfies DevicePresence;
}
