/**
 * The one owner of "where is device X": a live connection on the core's own tracker listeners
 * (in this process, or in one of its gateway processes: the link's holders), on an edge gateway,
 * on an MQTT client, or on another instance (announced through the event bus, relayed by Redis).
 *
 * Commands are delivered through the first side that holds the device; the command upkeep asks
 * which devices are connected here; and a device that comes online on one side has its connection
 * on the others closed, here and on every other instance: that connection is stale (half-open
 * until the idle timeout) and would take its commands.
 */
import type { EventBus } from '../core/events/event-bus.js';

/** One place a device's connection may be, in the order commands try them. */
export interface DeviceSide {
  /** trackers and edge gateways: tracker connections, closed when the device comes online elsewhere; MQTT clients are left alone */
  kind: 'tracker' | 'mqtt';
  /** Has the side that holds the device's connection deliver its queued commands: whether it holds one. */
  deliverCommands(deviceId: string): boolean;
  connectedDevices(): string[];
  /** Calls `fn` when a device gets a live connection on this side. */
  onOnline?(fn: (deviceId: string) => void): void;
  /** Calls `fn` when a device's live connection on this side ends (it may be gone already or soon). */
  onOffline?(fn: (deviceId: string) => void): void;
  /** Closes the device's connection on this side, if any: it is online on `elsewhere` now. */
  drop?(deviceId: string, elsewhere: 'edge' | 'instance'): void;
}

export interface DeviceLocator {
  /** Delivers the device's queued commands through the side that holds it: whether one does. */
  deliverCommands(deviceId: string): boolean;
  /** every device connected here, on any side */
  connectedDevices(): string[];
  /** the same, on tracker sides only (what Running.gateway shows) */
  trackers: Pick<DeviceSide, 'deliverCommands' | 'connectedDevices'>;
  /** Calls `fn` when a device's connection on a side that says so ends (tracker sides). */
  onOffline(fn: (deviceId: string) => void): void;
  /** Stops listening to other instances. */
  close(): void;
}

/** A locator over `sides`, listening to the bus for devices that came online on another instance. */
export function createDeviceLocator(sides: DeviceSide[], events: EventBus): DeviceLocator {
  const trackerSides = sides.filter((s) => s.kind === 'tracker');
  const deliverOn = (list: DeviceSide[], deviceId: string) => list.some((s) => s.deliverCommands(deviceId));
  const connectedOn = (list: DeviceSide[]) => list.flatMap((s) => s.connectedDevices());
  for (const side of trackerSides) {
    side.onOnline?.((deviceId) => {
      // a tracker that moves between the core's own listeners and an edge gateway: its connection on the side it left is stale
      for (const other of trackerSides) if (other !== side) other.drop?.(deviceId, 'edge');
      events.trackerOnline(deviceId);
    });
  }
  // a tracker that moved to another instance (announced there, relayed through Redis)
  const offTrackerOnline = events.onTrackerOnline((deviceId, remote) => {
    if (!remote) return;
    for (const side of trackerSides) side.drop?.(deviceId, 'instance');
  });
  return {
    deliverCommands: (deviceId) => deliverOn(sides, deviceId),
    connectedDevices: () => connectedOn(sides),
    trackers: {
      deliverCommands: (deviceId) => deliverOn(trackerSides, deviceId),
      connectedDevices: () => connectedOn(trackerSides),
    },
    onOffline: (fn) => {
      for (const side of sides) side.onOffline?.(fn);
    },
    close: offTrackerOnline,
  };
}
