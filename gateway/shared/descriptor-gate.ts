/**
 * Keeps the tracker listeners from taking the last open files of their process (docs/scaling.md
 * "Operating-system limits for many trackers"): a process at its limit can accept nothing, REST,
 * MQTT and database files included. The TCP and OsmAnd HTTP listeners of one process share one
 * gate, which closes new tracker connections near the soft RLIMIT_NOFILE less a reserve, and
 * accepts again only once a twentieth of them have closed, so it does not flap at the edge.
 * No cap per address: trackers behind one carrier NAT share an address.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { Logger } from '../../core/logger.js';
import type { TrackerCounts } from '../../core/metrics/counts.js';

/**
 * Descriptors left to everything but tracker connections: REST clients, MQTT clients, the
 * database, Redis, forwards, logs. The larger of 100 and 5 % of the limit (1,000 of 20,000).
 */
export const descriptorReserve = (limit: number): number => Math.max(100, Math.ceil(limit * 0.05));

/** The process's soft limit on open files (Linux: /proc/self/limits); Infinity when unknown or unlimited. */
export function openFileLimit(): number {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    return soft && /^\d+$/.test(soft) ? Number(soft) : Number.POSITIVE_INFINITY;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** Descriptors the process holds now (Linux: /proc/self/fd, less the one reading it); 0 when unknown. */
export function openDescriptors(): number {
  try {
    return Math.max(0, readdirSync('/proc/self/fd').length - 1);
  } catch {
    return 0;
  }
}

export interface DescriptorGateOptions {
  logger: Logger;
  /** default: openFileLimit() */
  limit?: number;
}

export class DescriptorGate {
  readonly limit: number;
  readonly reserve: number;
  /** tracker connections admitted at most (set by measure) */
  capacity = Number.POSITIVE_INFINITY;
  private open = 0;
  private refusing = false;
  private refusedSince = 0;

  constructor(private readonly o: DescriptorGateOptions) {
    this.limit = o.limit ?? openFileLimit();
    this.reserve = descriptorReserve(this.limit);
    this.measure();
  }

  /** Counts what the process holds besides tracker connections (once its listeners are bound) and sets the capacity from it. */
  measure(): void {
    if (!Number.isFinite(this.limit)) return;
    const others = openDescriptors() - this.open;
    this.capacity = Math.max(0, this.limit - this.reserve - others);
  }

  /** Whether a new connection may stay; an admitted one is counted until its socket closes. */
  admit(socket: Socket, counts?: TrackerCounts): boolean {
    if (this.refusing || this.open >= this.capacity) {
      this.refuse(counts);
      return false;
    }
    this.open++;
    socket.once('close', () => this.release());
    return true;
  }

  private refuse(counts?: TrackerCounts): void {
    counts?.refusedConnection('descriptor_limit');
    this.refusedSince++;
    if (this.refusing) return;
    this.refusing = true;
    this.o.logger.warn(
      { connections: this.open, capacity: this.capacity, openFileLimit: this.limit, reserve: this.reserve },
      'tracker listeners refuse new connections: the process is near its open-file limit (ulimit -n); the reserve is kept for REST, MQTT and the database',
    );
  }

  private release(): void {
    this.open--;
    if (!this.refusing || this.open > this.capacity - Math.max(1, Math.floor(this.capacity / 20))) return;
    this.refusing = false;
    this.o.logger.info(
      { connections: this.open, capacity: this.capacity, refused: this.refusedSince },
      'tracker listeners accept new connections again',
    );
    this.refusedSince = 0;
  }
}
