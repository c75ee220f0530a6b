/**
 * Each device's owner and last location (the stored JSON text), remembered for the REST read path
 * on embedded storage, where this process is the only writer. An entry is forgotten after every
 * commit that may change it (locations stored, device changed or deleted). A read that overlapped
 * such a commit is not remembered (the epoch moved), so an answer is never older than the database.
 */
export interface LastLocationEntry {
  accountId: string;
  /** the last location as stored JSON text; null while the device has none */
  data: string | null;
}

export function createLastLocationCache(maxEntries = 50_000) {
  const entries = new Map<string, LastLocationEntry>();
  let epoch = 0;
  return {
    get: (deviceId: string): LastLocationEntry | undefined => entries.get(deviceId),
    /** Take before reading the database; pass to remember() with what was read. */
    epoch: (): number => epoch,
    remember(deviceId: string, entry: LastLocationEntry, readAtEpoch: number): void {
      if (readAtEpoch !== epoch) return;
      if (entries.size >= maxEntries) entries.clear();
      entries.set(deviceId, entry);
    },
    forget(deviceId: string): void {
      epoch++;
      entries.delete(deviceId);
    },
  };
}

export type LastLocationCache = ReturnType<typeof createLastLocationCache>;
