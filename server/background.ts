/**
 * What runs in the background once the listeners are bound: the alert rules, the forwards'
 * delivery loops, retention's purge, and the relays of events and raw frames to other instances (through Redis).
 */
import type { Config } from '../config/config.js';
import type { Db } from '../core/db/db.js';
import type { Clock } from '../core/clock.js';
import { startRulesEngine, type RulesEngine } from '../core/rules/rules.engine.js';
import { createRuleSource, timeZones } from '../core/rules/rule-source.js';
import { findById as findDevice } from '../core/devices/devices.repository.js';
import { startForwardRunner, type ForwardRunner } from '../core/forward/forward.runner.js';
import { openForwarder } from '../core/forward/open-forwarder.js';
import { startPurger, type Purger } from '../core/retention/retention.purger.js';
import { relayEvents } from '../core/events/event-relay.redis.js';
import { relayFrames } from '../gateway/shared/frame-relay.redis.js';
import type { Services } from './services.js';
import { startPartitionMaintenance, type PartitionMaintenance } from '../core/db/partitions/pg-partitions.js';

/** alert rules: positions stored here, and the time passing under a lease (one instance at a time) */
export function startRules(db: Db, clock: Clock, services: Services): RulesEngine {
  return startRulesEngine({
    db,
    clock,
    logger: services.logger,
    events: services.events,
    alerts: services.alertRecorder,
    source: createRuleSource(db),
    device: (id) => findDevice(db, id),
    timeZoneOf: timeZones(db, clock),
    commands: services.commands,
  });
}

/** forwards: one delivery loop per forward, under a lease (one instance at a time); never to a listener of this service (`ownPorts`) */
export function startForwarding(
  config: Readonly<Config>,
  db: Db,
  clock: Clock,
  services: Services,
  o: { ownPorts: number[]; userAgent: string },
): ForwardRunner {
  const targets = services.forwardTargets;
  targets.setOwnPorts(o.ownPorts);
  return startForwardRunner({
    db,
    clock,
    logger: services.logger,
    events: services.events,
    targets,
    open: (f) => openForwarder(f, { timeoutMs: config.forwardTimeoutMs, userAgent: o.userAgent, targets }),
    settings: { retentionMs: config.forwardRetentionDays * 86_400_000, maxPendingPerAccount: config.forwardMaxPending },
  });
}

/** retention: old locations, alerts and commands deleted within a minute of start, then hourly (docs/operations.md "Retention") */
export function startRetention(config: Readonly<Config>, db: Db, clock: Clock, services: Services): Purger {
  return startPurger({ db, clock, logger: services.logger, settings: { retentionDays: config.retentionDays } });
}

/** With Redis, the event bus and (for accounts someone on another instance listens to) raw frames cross instances; returns what closes them. */
export async function startRelays(config: Readonly<Config>, services: Services): Promise<(() => Promise<void>)[]> {
  if (!config.redisUrl) return [];
  const { logger } = services;
  const relay = await relayEvents(services.events, config.redisUrl, config.redisPrefix, logger, {
    live: config.mqttPort !== 'off',
    timeoutMs: config.redisTimeoutMs,
  });
  const closers = [() => relay.close()];
  try {
    const frames = await relayFrames(services.frames, config.redisUrl, config.redisPrefix, logger, {
      timeoutMs: config.redisTimeoutMs,
    });
    return [...closers, () => frames.close()];
  } catch (e) {
    await relay.close();
    throw e;
  }
}

/** PostgreSQL: partitions of locations and alerts made ahead, at start and hourly, by one instance (an advisory lock); SQLite: nothing */
export function startPartitions(
  config: Readonly<Config>,
  db: Db,
  clock: Clock,
  services: Services,
): PartitionMaintenance {
  return startPartitionMaintenance({ db, clock, logger: services.logger, interval: config.pgPartitionInterval });
}
