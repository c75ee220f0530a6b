/** One live connection per device: a tracker that reconnects replaces its older connection. */
export interface Replaceable {
  close(reason: string): void;
}

export class ConnectionRegistry<C extends Replaceable = Replaceable> {
  private readonly byDevice = new Map<string, C>();

  /** `onChange`: a device got or lost its live connection here (a gateway process tells the core, gateway/ipc/) */
  constructor(private readonly onChange?: (deviceId: string, connected: boolean) => void) {}

  claim(deviceId: string, connection: C): void {
    const old = this.byDevice.get(deviceId);
    if (old && old !== connection) old.close('replaced by a newer connection of the same device');
    this.byDevice.set(deviceId, connection);
    if (old !== connection) this.onChange?.(deviceId, true);
  }

  /** The device's live connection on this instance, if any. */
  get(deviceId: string): C | undefined {
    return this.byDevice.get(deviceId);
  }

  /** Every device with a live connection on this instance. */
  deviceIds(): string[] {
    return [...this.byDevice.keys()];
  }

  release(deviceId: string, connection: C): void {
    if (this.byDevice.get(deviceId) !== connection) return;
    this.byDevice.delete(deviceId);
    this.onChange?.(deviceId, false);
  }
}
