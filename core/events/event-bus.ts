/**
 * What changed, announced after its commit: stored locations and alerts, whatever their source
 * (REST, TCP trackers, MQTT), which the MQTT live feed and the last-location cache listen to; and
 * changed devices, users and accounts, the one way every cache of them is cleared. With Redis the
 * event relay (event-relay.redis.ts) carries them to the other instances.
 */
import { EventEmitter } from 'node:events';
import type { Location } from '../model/location.js';
import type { Alert } from '../model/alert.js';
import type { Command } from '../model/command.js';

export interface StoredLocation {
  accountId: string;
  deviceId: string;
  location: Location;
}

export interface StoredAlert {
  accountId: string;
  deviceId: string;
  alert: Alert;
}

/** A command whose status changed (queued, sent, answered, expired, failed, cancelled), as REST shows it. */
export interface ChangedCommand {
  accountId: string;
  deviceId: string;
  command: Command;
}

/**
 * Every event on the bus and what it carries, named once: the bus's methods below and the Redis
 * relay (event-relay.redis.ts) are typed by it. Each listener is also told whether the event came
 * from another instance (`remote`).
 */
export interface EventMap {
  /** locations stored (never an empty batch) */
  locations: StoredLocation[];
  alert: StoredAlert;
  /** a user id */
  user: string;
  /** a device id */
  device: string;
  /** an account id (its settings) */
  account: string;
  /** an account id (its alert rules or zones) */
  rules: string;
  /** an account id (its forwards) */
  forwards: string;
  /** a device id */
  commandsQueued: string;
  /** a device id */
  trackerOnline: string;
  command: ChangedCommand;
}

export type EventName = keyof EventMap;
export type Listener<E extends EventName> = (payload: EventMap[E], remote: boolean) => void;

export class EventBus {
  private readonly emitter = new EventEmitter({ captureRejections: false });

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  /** Adds a listener; returns the function that removes it. */
  on<E extends EventName>(event: E, fn: Listener<E>): () => void {
    const listener = fn as (...args: unknown[]) => void;
    this.emitter.on(event, listener);
    return () => this.emitter.off(event, listener);
  }

  /** `remote`: the event happened on another instance and was relayed here (so it is not relayed back). */
  emit<E extends EventName>(event: E, payload: EventMap[E], remote = false): void {
    if (event === 'locations' && (payload as StoredLocation[]).length === 0) return;
    this.emitter.emit(event, payload, remote);
  }

  locationsStored(items: StoredLocation[], remote = false): void {
    this.emit('locations', items, remote);
  }

  alertStored(item: StoredAlert, remote = false): void {
    this.emit('alert', item, remote);
  }

  /** A user's key, privileges or group changed: cached principals must be dropped everywhere. */
  userChanged(userId: string, remote = false): void {
    this.emit('user', userId, remote);
  }

  onUserChanged(fn: Listener<'user'>): () => void {
    return this.on('user', fn);
  }

  /** A device was changed (expiry, credentials, model, …) or deleted: cached records must be dropped everywhere. */
  deviceChanged(deviceId: string, remote = false): void {
    this.emit('device', deviceId, remote);
  }

  onDeviceChanged(fn: Listener<'device'>): () => void {
    return this.on('device', fn);
  }

  /** An account's settings (its time zone) changed. */
  accountChanged(accountId: string, remote = false): void {
    this.emit('account', accountId, remote);
  }

  onAccountChanged(fn: Listener<'account'>): () => void {
    return this.on('account', fn);
  }

  /** An account's alert rules or zones changed: rule caches must be dropped everywhere. */
  rulesChanged(accountId: string, remote = false): void {
    this.emit('rules', accountId, remote);
  }

  onRulesChanged(fn: Listener<'rules'>): () => void {
    return this.on('rules', fn);
  }

  /** An account's forwards changed: every instance's forward journal and delivery loops look again. */
  forwardsChanged(accountId: string, remote = false): void {
    this.emit('forwards', accountId, remote);
  }

  onForwardsChanged(fn: Listener<'forwards'>): () => void {
    return this.on('forwards', fn);
  }

  // Commands (docs/contract.md "Commands"): the instance holding the device's connection delivers.
  /** Commands were queued for a device whose connection may be held by another instance. */
  commandsQueued(deviceId: string, remote = false): void {
    this.emit('commandsQueued', deviceId, remote);
  }

  onCommandsQueued(fn: Listener<'commandsQueued'>): () => void {
    return this.on('commandsQueued', fn);
  }

  /**
   * A tracker identified itself on a new connection here: a connection of the same device on
   * another instance (the tracker moved, its old connection half-open) is stale, and commands must
   * not go to it.
   */
  trackerOnline(deviceId: string, remote = false): void {
    this.emit('trackerOnline', deviceId, remote);
  }

  onTrackerOnline(fn: Listener<'trackerOnline'>): () => void {
    return this.on('trackerOnline', fn);
  }

  onLocations(fn: Listener<'locations'>): () => void {
    return this.on('locations', fn);
  }

  onAlert(fn: Listener<'alert'>): () => void {
    return this.on('alert', fn);
  }

  /** A command's status changed (the live feed live/{deviceId}/commands), on this instance or, relayed, on another. */
  commandChanged(item: ChangedCommand, remote = false): void {
    this.emit('command', item, remote);
  }

  onCommandChanged(fn: Listener<'command'>): () => void {
    return this.on('command', fn);
  }
}
