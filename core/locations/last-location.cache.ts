/** A device's owner and last location, as the database holds them. */
export interface LastLocationEntry {
  accountId: string;
  /** the last location as stored JSON text; null while the device has none */
  data: string | null;
}

/**
 * Each device's owner and last location (the stored JSON text), remembered for the REST read path
 * on embedded storage, where this process is the only writer. An entry is forgotten after every
 * commit that may change it (locations stored, device changed or deleted). A read that overlapped
 * such a commit is not remembered (the epoch moved), so an answer is never older than the database.
 */
export interface LastLocationCache {
  /** The remembered entry of a device, if any. */
  get(deviceId: string): LastLocationEntry | undefined;
  /** Take before reading the database; pass to remember() with what was read. */
  epoch(): number;
  /** Remembers what was read, unless a commit was announced since `readAtEpoch` (then it may be old). */
  remember(deviceId: string, entry: LastLocationEntry, readAtEpoch: number): void;
  /** Forgets a device's entry after a commit that may change it; moves the epoch. */
  forget(deviceId: string): void;
}

export function createLastLocationCache(maxEntries = 50_000): LastLocationCache {
  const entries = new Map<string, LastLocationEntry>();
  let epoch = 0;
  return {
    get: (deviceId) => entries.get(deviceId),
    epoch: () => epoch,
    remember(deviceId, entry, readAtEpoch) {
      if (readAtEpoch !== epoch) return;
      if (entries.size >= maxEntries) entries.clear();
      entries.set(deviceId, entry);
    },
    forget(deviceId) {
      epoch++;
      entries.delete(deviceId);
    },
  };
}
