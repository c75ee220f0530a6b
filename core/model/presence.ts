/** How a device reaches trackgate now (GET /api/lastLocations `transport`). */
export type Transport = 'tcp' | 'udp' | 'mqtt' | 'http';

/**
 * Where devices are connected, as the device locator sees it on this instance (server/device-locator.ts):
 * filled in once the listeners are bound, empty before.
 */
export interface DevicePresence {
  /** the devices with a live connection on this instance (tracker sides: TCP; MQTT clients), with its transport */
  connectedHere(): Map<string, Transport>;
  /**
   * The transport of a device heard within `recentMs` (at `lastConnectionMs`, on `protocol`) that
   * holds no connection here: the protocol's datagram or HTTP transport, or its connection on
   * another instance where storage is shared; undefined when it is offline (its last connection
   * ended here after it was last heard, or nothing connectionless carries its protocol).
   */
  heardTransport(deviceId: string, protocol: string | null, lastConnectionMs: number): Transport | undefined;
  /** how recent a last connection counts as heard (the idle timeout: a silent connection is closed after it) */
  recentMs: number;
}

/** Nothing connected anywhere (before the listeners are bound, and in tools that run none). */
export const noPresence: DevicePresence = {
  connectedHere: () => new Map(),
  heardTransport: () => undefined,
  recentMs: 0,
};
