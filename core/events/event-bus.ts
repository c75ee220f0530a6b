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

export class EventBus {
  private readonly emitter = new EventEmitter({ captureRejections: false });

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  /** Adds a listener; returns the function that removes it. */
  private subscribe(event: string, fn: (...args: never[]) => void): () => void {
    const listener = fn as (...args: unknown[]) => void;
    this.emitter.on(event, listener);
    return () => this.emitter.off(event, listener);
  }

  /** `remote`: stored by another instance and relayed here (so it is not relayed back). */
  locationsStored(items: StoredLocation[], remote = false): void {
    if (items.length) this.emitter.emit('locations', items, remote);
  }

  alertStored(item: StoredAlert, remote = false): void {
    this.emitter.emit('alert', item, remote);
  }

  /** A user's key, privileges or group changed: cached principals must be dropped everywhere. */
  userChanged(userId: string, remote = false): void {
    this.emitter.emit('user', userId, remote);
  }

  onUserChanged(fn: (userId: string, remote: boolean) => void): () => void {
    return this.subscribe('user', fn);
  }

  /** A device was changed (expiry, credentials, model, …) or deleted: cached records must be dropped everywhere. */
  deviceChanged(deviceId: string, remote = false): void {
    this.emitter.emit('device', deviceId, remote);
  }

  onDeviceChanged(fn: (deviceId: string, remote: boolean) => void): () => void {
    return this.subscribe('device', fn);
  }

  /** An account's settings (its time zone) changed. */
  accountChanged(accountId: string, remote = false): void {
    this.emitter.emit('account', accountId, remote);
  }

  onAccountChanged(fn: (accountId: string, remote: boolean) => void): () => void {
    return this.subscribe('account', fn);
  }

  /** An account's alert rules or zones changed: rule caches must be dropped everywhere. */
  rulesChanged(accountId: string, remote = false): void {
    this.emitter.emit('rules', accountId, remote);
  }

  onRulesChanged(fn: (accountId: string, remote: boolean) => void): () => void {
    return this.subscribe('rules', fn);
  }

  /** An account's forwards changed: every instance's forward journal and delivery loops look again. */
  forwardsChanged(accountId: string, remote = false): void {
    this.emitter.emit('forwards', accountId, remote);
  }

  onForwardsChanged(fn: (accountId: string, remote: boolean) => void): () => void {
    return this.subscribe('forwards', fn);
  }

  // Commands (CONTRACT.md "Commands"): the instance holding the device's connection delivers.
  /** Commands were queued for a device whose connection may be held by another instance. */
  commandsQueued(deviceId: string, remote = false): void {
    this.emitter.emit('commandsQueued', deviceId, remote);
  }

  onCommandsQueued(fn: (deviceId: string, remote: boolean) => void): () => void {
    return this.subscribe('commandsQueued', fn);
  }

  /**
   * A tracker identified itself on a new connection here: a connection of the same device on
   * another instance (the tracker moved, its old connection half-open) is stale, and commands must
   * not go to it.
   */
  trackerOnline(deviceId: string, remote = false): void {
    this.emitter.emit('trackerOnline', deviceId, remote);
  }

  onTrackerOnline(fn: (deviceId: string, remote: boolean) => void): () => void {
    return this.subscribe('trackerOnline', fn);
  }

  onLocations(fn: (items: StoredLocation[], remote: boolean) => void): () => void {
    return this.subscribe('locations', fn);
  }

  onAlert(fn: (item: StoredAlert, remote: boolean) => void): () => void {
    return this.subscribe('alert', fn);
  }

  /** A command's status changed (the live feed live/{deviceId}/commands), on this instance or, relayed, on another. */
  commandChanged(item: ChangedCommand, remote = false): void {
    this.emitter.emit('command', item, remote);
  }

  onCommandChanged(fn: (item: ChangedCommand, remote: boolean) => void): () => void {
    return this.subscribe('command', fn);
  }
}
