/**
 * Commands to devices (docs/commands.md): the durable queue, its states and the answers tied back.
 * One command in flight per device, oldest first; a queued command expires after its ttl; one
 * sent on a connection that dropped goes back to the queue, up to MAX_COMMAND_ATTEMPTS deliveries.
 * core does not know protocols: server/ passes `check` (the protocol's encoder run on the text) and
 * `delivery` (the tracker gateway's live connections).
 */
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { Principal } from '../model/user.js';
import type { Command, CommandFormat, CommandMatchData, CommandRecord, DeviceLogItem } from '../model/command.js';
import type { Notifier } from '../notify/notifier.js';
import { isExpired, type DeviceRecord } from '../model/device.js';
import { iso, isoRequired } from '../model/time.js';
import { DomainError } from '../errors.js';
import { requirePrivilege, visibleDevice } from '../access/access.js';
import * as repo from './commands.repository.js';
import * as deviceLog from '../devices/device-log.repository.js';
import { accountOf } from '../devices/devices.repository.js';

export const DEFAULT_COMMAND_TTL_SECONDS = 86_400;
export const MAX_COMMAND_TTL_SECONDS = 2_592_000;
/** deliveries of one command (each on a connection that then dropped before the answer) before it has failed */
export const MAX_COMMAND_ATTEMPTS = 3;
/** longest command text or byte string taken (every protocol's own limit is lower or checked by its encoder) */
export const MAX_COMMAND_LENGTH = 4096;
const LIST_LIMIT = 200;

/**
 * What the device's protocol says of a command: `ok`; `unsupported` (the protocol carries no
 * commands); or why the text cannot be carried (CommandError's reason and message).
 */
export type CommandCheck = 'ok' | 'unsupported' | { reason: string; message: string };

/** The tracker gateway's side: whether this process holds the device's live connection, which then delivers its queue. */
export interface CommandDelivery {
  deliver(deviceId: string): boolean;
}

export interface CommandsDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  /** how long sendCommand waits for an online device's answer (TRACKGATE_COMMAND_WAIT) */
  waitMs: number;
  /** runs the protocol's encoder on a Text command (main.ts: protocols/) */
  check(protocol: string, deviceId: string, format: CommandFormat, text: string): CommandCheck;
  /** TRACKGATE_SMS_URL; absent: `sms: true` is refused */
  sms?: Notifier;
  /** a command was queued for a device not connected here (main.ts: the event bus, relayed through Redis) */
  announce?(deviceId: string): void;
  /**
   * Several instances share the database (PostgreSQL): a device not connected here may be connected
   * to another, which picks its command up (at once through Redis, within `pickupMs` through the
   * database). sendCommand then waits for it when the device reported within `recentMs`, reading
   * the command's row every `pollMs` (the answer is stored by the other instance).
   */
  remote?: { pickupMs: number; recentMs: number; pollMs: number };
  /** told every status change of a command (the MQTT live feed `live/{deviceId}/commands`) */
  onChange?: (command: CommandRecord) => void;
}

export interface SendInput {
  command: string;
  format?: CommandFormat;
  sms?: boolean;
  /** seconds the command may wait for the device (default 86,400, at most 2,592,000) */
  ttl?: number;
}

export interface CommandsService {
  /** Creates a command (needs `execute` or `admin`): written at once to an online device, whose answer is awaited; queued otherwise. */
  send(p: Principal, deviceId: string, input: SendInput): Promise<{ result: string; command: Command }>;
  /** A device's commands, newest first. */
  list(p: Principal, deviceId: string): Promise<Command[]>;
  /** Cancels a queued command. */
  cancel(p: Principal, deviceId: string, commandId: number): Promise<Command>;
  /** The gateway's live connections (set by server/commands.ts once the gateway runs). */
  attach(delivery: CommandDelivery): void;
  /**
   * Called when a device identifies itself on a new connection: its commands sent on an earlier
   * connection and never answered go back to the queue (or fail after MAX_COMMAND_ATTEMPTS).
   */
  recover(deviceId: string): Promise<void>;
  /** The device's next queued command, oldest first (expired ones expire first). */
  next(deviceId: string): Promise<CommandRecord | undefined>;
  /** Marks a queued command sent, with what its answer will echo; false if it is no longer queued (cancelled). */
  markSent(id: number, match: CommandMatchData): Promise<boolean>;
  /** A queued command that cannot be delivered (its protocol cannot encode it). */
  markFailed(id: number, why: string): Promise<void>;
  /** The device's answer to a sent command. */
  answered(id: number, text: string): Promise<void>;
  /**
   * An answer naming its command by id (MQTT devices), whatever connection the command went out
   * on: answers it if it is the device's and was sent (also one back in the queue after a
   * reconnection, which is then not sent again); false otherwise.
   */
  answeredById(deviceId: string, id: number, text: string): Promise<boolean>;
  /** A reply of the device that answers no command sent to it: kept in the device's log, not dropped. */
  unsolicited(deviceId: string, reply: { protocol: string; text: string; status?: string }): Promise<void>;
  /** The device's log (*ext*), newest first: its unsolicited replies. */
  log(p: Principal, deviceId: string): Promise<DeviceLogItem[]>;
  /**
   * The periodic upkeep (main.ts, every COMMAND_UPKEEP_MS): queued commands past their ttl become
   * `expired` whoever reads them, and of `connected` (the devices connected to this instance)
   * those with queued commands are returned, to be delivered (created on another instance).
   */
  upkeep(connected: string[]): Promise<string[]>;
}

/** how often the upkeep runs: a command created on an instance without Redis reaches the device's instance within it */
export const COMMAND_UPKEEP_MS = 2000;

/** The bytes of a Hex or Base64 command, or the problem. Hex may hold spaces and hyphens between digits. */
export function commandBytes(format: 'Hex' | 'Base64', command: string): Buffer | string {
  if (format === 'Hex') {
    const hex = command.replace(/[\s-]/g, '');
    if (!/^(?:[0-9a-fA-F]{2})+$/.test(hex))
      return 'Hex must be pairs of hexadecimal digits (spaces and hyphens between them are allowed)';
    return Buffer.from(hex, 'hex');
  }
  const b64 = command.replace(/\s/g, '');
  if (b64.length === 0 || b64.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64))
    return 'Base64 must be standard Base64 (A-Z a-z 0-9 + /, padded with =)';
  return Buffer.from(b64, 'base64');
}

export function present(c: CommandRecord): Command {
  return {
    id: c.id,
    status: c.status,
    command: c.command,
    format: c.format,
    sms: c.sms,
    created: isoRequired(c.createdAt),
    sent: iso(c.sentAt),
    answered: iso(c.answeredAt),
    expires: isoRequired(c.expiresAt),
    attempts: c.attempts,
    result: c.result,
  };
}

const invalid = (message: string, reason?: string): DomainError =>
  new DomainError('VALIDATION_FAILED', `command: ${message}`, { field: 'command', ...(reason && { reason }) });

export function createCommandsService(deps: CommandsDeps): CommandsService {
  const { db, clock, logger } = deps;
  const waits = answerWaits(db);
  const now = () => clock.now().getTime();

  /**
   * Every status change of a command ends here, with the command as the change left it: its
   * waiters wake and deps.onChange is told at once, so each change is told, in order.
   */
  const changed = (c: CommandRecord | undefined): void => {
    if (!c) return;
    waits.wake(c.id);
    try {
      deps.onChange?.(c);
    } catch (err) {
      logger.warn({ err, command: c.id }, 'command change: announcing it failed');
    }
  };

  /** Queued commands past their ttl (of one device, or all) become `expired`, each announced like any change: how many. */
  async function expire(deviceId?: string): Promise<number> {
    const expired = await repo.expireDue(db, now(), deviceId);
    expired.forEach(changed);
    return expired.length;
  }

  const ctx: Context = { deps, now, changed, expire };
  return {
    ...restSide(ctx, waits.waitForAnswer),
    ...deviceSide(ctx),
    async upkeep(connected) {
      const expired = await expire();
      if (expired) logger.info({ expired }, 'queued commands expired unsent');
      return connected.length ? repo.devicesWithQueued(db, connected) : [];
    },
  };
}

/** What the two sides of the queue share. */
interface Context {
  deps: CommandsDeps;
  now(): number;
  /** every status change of a command is told here */
  changed(c: CommandRecord | undefined): void;
  expire(deviceId?: string): Promise<number>;
}

type WaitForAnswer = ReturnType<typeof answerWaits>['waitForAnswer'];

/** REST's side: send (and wait for the answer), list, cancel, the device's log; and the delivery attached. */
function restSide(
  ctx: Context,
  waitForAnswer: WaitForAnswer,
): Pick<CommandsService, 'send' | 'list' | 'cancel' | 'attach' | 'log'> {
  const { deps, now, changed, expire } = ctx;
  const { db } = deps;
  let delivery: CommandDelivery | undefined;

  return {
    async send(p, deviceId, input) {
      const device = await visibleDevice(db, p, deviceId);
      requirePrivilege(p, 'execute');
      const { format, sms, ttl } = checkSend(ctx, device, input);
      const createdAt = now();
      const created = await repo.insert(db, {
        deviceId: device.id,
        accountId: device.accountId,
        command: input.command,
        format,
        sms,
        createdAt,
        expiresAt: createdAt + ttl * 1000,
      });
      changed(created);
      if (sms) return viaSms(ctx, device, created);
      const queued = (c: CommandRecord) => ({
        result: `Queued: the device is not connected; the command is sent when it next identifies itself, until ${isoRequired(c.expiresAt)}.`,
        command: present(c),
      });
      let c: CommandRecord;
      if (delivery?.deliver(device.id)) {
        c = await waitForAnswer(created.id, deps.waitMs);
      } else {
        deps.announce?.(device.id);
        const remote = deps.remote;
        // a device silent for longer is taken as offline: no wait for another instance to pick it up
        if (!remote || device.lastConnection === null || createdAt - device.lastConnection > remote.recentMs)
          return queued(created);
        c = await waitForAnswer(created.id, deps.waitMs, remote);
        if (c.status === 'queued') return queued(c);
      }
      return { result: waitedResult(c, deps.waitMs / 1000), command: present(c) };
    },

    async list(p, deviceId) {
      await visibleDevice(db, p, deviceId);
      await expire(deviceId);
      return (await repo.listByDevice(db, deviceId, LIST_LIMIT)).map(present);
    },

    cancel: (p, deviceId, commandId) => cancelCommand(ctx, p, deviceId, commandId),

    attach(d) {
      delivery = d;
    },

    async log(p, deviceId) {
      await visibleDevice(db, p, deviceId);
      return (await deviceLog.list(db, deviceId, LIST_LIMIT)).map((e) => ({
        id: e.id,
        dateTime: isoRequired(e.at),
        type: e.type,
        protocol: e.protocol,
        text: e.text,
        ...(typeof e.detail?.status === 'string' && { status: e.detail.status }),
      }));
    },
  };
}

/** Cancels a queued command of a device the caller may see. */
async function cancelCommand(ctx: Context, p: Principal, deviceId: string, commandId: number): Promise<Command> {
  const { deps, changed, expire } = ctx;
  const { db } = deps;
  await visibleDevice(db, p, deviceId);
  requirePrivilege(p, 'execute');
  await expire(deviceId);
  const c = await repo.get(db, commandId);
  if (!c || c.deviceId !== deviceId)
    throw new DomainError('COMMAND_NOT_FOUND', `Command ${commandId} of device "${deviceId}" was not found.`);
  const cancelled = await repo.transition(db, c.id, 'queued', 'cancelled');
  if (!cancelled) {
    const current = (await repo.get(db, c.id))!;
    throw new DomainError(
      'COMMAND_NOT_QUEUED',
      `Command ${commandId} is ${current.status}; only a queued command can be cancelled.`,
      { status: current.status },
    );
  }
  changed(cancelled);
  return present(cancelled);
}

/** The side of the gateway holding the device's connection: what to send next, sent, answered, failed. */
function deviceSide(
  ctx: Context,
): Pick<CommandsService, 'recover' | 'next' | 'markSent' | 'markFailed' | 'answered' | 'answeredById' | 'unsolicited'> {
  const { deps, now, changed, expire } = ctx;
  const { db, logger } = deps;

  return {
    async recover(deviceId) {
      if (!(await repo.hasOpen(db, deviceId))) return;
      const nowMs = now();
      for (const c of await repo.inStatus(db, deviceId, 'sent')) {
        if (c.sms) continue;
        if (c.attempts >= MAX_COMMAND_ATTEMPTS) {
          changed(
            await repo.transition(db, c.id, 'sent', 'failed', {
              result: `No answer after ${c.attempts} deliveries: the device dropped the connection each time before answering.`,
            }),
          );
        } else if (c.expiresAt <= nowMs) {
          changed(await repo.transition(db, c.id, 'sent', 'expired'));
        } else {
          changed(await repo.transition(db, c.id, 'sent', 'queued'));
        }
      }
    },

    async next(deviceId) {
      // most trackers have nothing waiting: one read, no write
      if (!(await repo.hasOpen(db, deviceId))) return undefined;
      await expire(deviceId);
      // an SMS command is on its way through the SMS gateway, not the connection
      return (await repo.inStatus(db, deviceId, 'queued')).find((c) => !c.sms);
    },

    async markSent(id, match) {
      const moved = await repo.transition(db, id, 'queued', 'sent', { sentAt: now(), match, addAttempt: true });
      changed(moved);
      return moved !== undefined;
    },

    async markFailed(id, why) {
      changed(await repo.transition(db, id, 'queued', 'failed', { result: why }));
    },

    async answered(id, text) {
      const answered = await repo.transition(db, id, 'sent', 'answered', { answeredAt: now(), result: text });
      if (answered) changed(answered);
      else logger.debug({ command: id }, 'answer to a command that is no longer sent: ignored');
    },

    async answeredById(deviceId, id, text) {
      const c = await repo.get(db, id);
      if (!c || c.deviceId !== deviceId) return false;
      const from = c.status === 'sent' ? 'sent' : c.status === 'queued' && c.attempts > 0 ? 'queued' : undefined;
      const answered = from && (await repo.transition(db, id, from, 'answered', { answeredAt: now(), result: text }));
      if (!answered) return false;
      changed(answered);
      return true;
    },

    async unsolicited(deviceId, reply) {
      const accountId = await accountOf(db, deviceId);
      if (accountId === undefined) return;
      await deviceLog.append(db, {
        deviceId,
        accountId,
        at: now(),
        type: 'unsolicitedReply',
        protocol: reply.protocol,
        text: reply.text,
        detail: reply.status === undefined ? null : { status: reply.status },
      });
    },
  };
}

/** A command sent through the SMS gateway: `sent` once the gateway took it, else `failed`. */
async function viaSms(
  ctx: Context,
  device: { id: string; min: string | null },
  created: CommandRecord,
): Promise<{ result: string; command: Command }> {
  const { deps, now, changed } = ctx;
  const { db } = deps;
  try {
    await deps.sms!.send({
      channel: 'SMS',
      to: device.min!,
      text: created.command,
      deviceId: device.id,
      alertName: 'command',
    });
  } catch (e) {
    const why = `The SMS gateway did not take the command: ${(e as Error).message}`;
    changed(await repo.transition(db, created.id, 'queued', 'failed', { result: why }));
    throw new DomainError('SMS_FAILED', why);
  }
  const result = `Sent by SMS to ${device.min}.`;
  changed(await repo.transition(db, created.id, 'queued', 'sent', { sentAt: now(), addAttempt: true, result: null }));
  return { result, command: present((await repo.get(db, created.id))!) };
}

/** A send's input as the queue takes it, or why not (before anything is stored). */
function checkSend(
  ctx: Context,
  device: DeviceRecord,
  input: Parameters<CommandsService['send']>[2],
): { format: CommandFormat; sms: boolean; ttl: number } {
  const { deps } = ctx;
  const format = input.format ?? 'Text';
  const sms = input.sms ?? false;
  const ttl = input.ttl ?? DEFAULT_COMMAND_TTL_SECONDS;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_COMMAND_TTL_SECONDS) {
    throw new DomainError('VALIDATION_FAILED', `ttl: must be whole seconds from 1 to ${MAX_COMMAND_TTL_SECONDS}`, {
      field: 'ttl',
    });
  }
  validate(deps.check, device, format, input.command, sms);
  // the gateway refuses an expired device's frames, so a command could only wait for its ttl
  if (isExpired(device, ctx.now()))
    throw new DomainError('DEVICE_EXPIRED', `Device "${device.id}" is expired: it cannot receive commands.`);
  if (sms) {
    if (!deps.sms)
      throw new DomainError('SMS_UNAVAILABLE', 'Commands by SMS need an SMS gateway: set TRACKGATE_SMS_URL.');
    if (!device.min)
      throw new DomainError('SMS_UNAVAILABLE', `Device "${device.id}" has no phone number (min) to send an SMS to.`);
  }
  return { format, sms, ttl };
}

/** What a send answers after waiting `seconds` for the device. */
function waitedResult(c: CommandRecord, seconds: number): string {
  if (c.status === 'answered') return c.result ?? '';
  if (c.status === 'sent')
    return `No reply from the device within ${seconds} s; the command stays sent and a later reply is recorded with it.`;
  if (c.status === 'queued')
    return `Queued behind an earlier command the device has not answered yet; not sent within ${seconds} s.`;
  return c.result ?? `The command is ${c.status}.`;
}

function validate(
  check: CommandsDeps['check'],
  device: { id: string; protocol: string | null },
  format: CommandFormat,
  command: string,
  sms: boolean,
): void {
  if (command.length === 0) throw invalid('is empty', 'EMPTY');
  if (command.length > MAX_COMMAND_LENGTH) throw invalid(`is longer than ${MAX_COMMAND_LENGTH} characters`, 'TOO_LONG');
  if (format !== 'Text') {
    if (sms) throw invalid('an SMS command must be Text');
    const bytes = commandBytes(format, command);
    if (typeof bytes === 'string') throw invalid(bytes, 'FORMAT');
    if (bytes.length === 0) throw invalid('holds no bytes', 'EMPTY');
  }
  if (sms || device.protocol === null) return;
  const checked = check(device.protocol, device.id, format, command);
  if (checked === 'unsupported')
    throw new DomainError(
      'COMMAND_UNSUPPORTED',
      `Devices that use the ${device.protocol} protocol cannot receive commands.`,
      { protocol: device.protocol },
    );
  if (checked !== 'ok') throw invalid(`${checked.message} (${checked.reason})`, checked.reason);
}

/** Waits for answers: each waiter is woken at every change of its command (`wake`). */
function answerWaits(db: Db) {
  /** waiters of sendCommand answers, by command id */
  const waiters = new Map<number, Set<() => void>>();

  /**
   * Waits until the command leaves `queued`/`sent` or `ms` pass; the command as it then is. With
   * `poll` (the device may be connected to another instance, which stores its answer), the row is
   * read every `pollMs`, and a command still queued after `pickupMs` is left to wait in the queue.
   */
  async function waitForAnswer(
    id: number,
    ms: number,
    poll?: { pickupMs: number; pollMs: number },
  ): Promise<CommandRecord> {
    // a real wait (setTimeouts), timed by the monotonic clock: the injected Clock is the domain's time, which tests may hold still
    const started = performance.now();
    const deadline = started + ms;
    const set = waiters.get(id) ?? new Set();
    waiters.set(id, set);
    try {
      for (;;) {
        const c = (await repo.get(db, id))!;
        const left = deadline - performance.now();
        if ((c.status !== 'queued' && c.status !== 'sent') || left <= 0) return c;
        if (poll && c.status === 'queued' && performance.now() - started >= poll.pickupMs) return c;
        await new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            set.delete(wake);
            resolve();
          };
          const timer = setTimeout(wake, poll ? Math.min(left, poll.pollMs) : left);
          set.add(wake);
        });
      }
    } finally {
      if (set.size === 0) waiters.delete(id);
    }
  }

  return { waitForAnswer, wake: (id: number) => waiters.get(id)?.forEach((w) => w()) };
}
