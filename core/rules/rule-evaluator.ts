/**
 * Runs one input (a position, or the time passing) through one rule on one device: the detector
 * (rule-detectors.ts) says the new state and whether the rule fires; a firing rule's alert goes
 * through the one alert path, within its schedule, and its command through the commands path.
 */
import type { Logger } from '../logger.js';
import type { AlertRecorder } from '../alerts/alert.recorder.js';
import type { AlertRule, RuleSchedule } from '../model/alert-rule.js';
import type { DeviceRecord } from '../model/device.js';
import type { Principal } from '../model/user.js';
import type { CommandsService } from '../commands/commands.service.js';
import { DETECTORS, type RuleInput, type RuleState, type ZoneTest } from './rule-detectors.js';
import type { RuleSlot } from './rule-contexts.js';
import type { StateFlusher } from './state-flusher.js';

/** alert names whose alerts are edges (each one an event), not a condition that lasts */
const EDGES = new Set(['CheckArea', 'FuelJumpDown', 'FuelJumpUp']);

const WEEKDAYS: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 };
const formatters = new Map<string, Intl.DateTimeFormat>();

/** Whether `at` falls in the schedule, in the account's time zone: `from` included, `to` not; `to` before `from` spans midnight; `to` = `from` is the whole day. */
export function inSchedule(s: RuleSchedule, at: number, timeZone: string): boolean {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, f);
  }
  const parts = Object.fromEntries(f.formatToParts(new Date(at)).map((p) => [p.type, p.value]));
  const day = WEEKDAYS[parts.weekday];
  const minute = Number(parts.hour) * 60 + Number(parts.minute);
  const from = toMinutes(s.from);
  const to = toMinutes(s.to);
  if (from === to) return s.days.includes(day);
  if (from < to) return s.days.includes(day) && minute >= from && minute < to;
  // spans midnight: the evening belongs to its day, the early morning to the day before
  if (minute >= from) return s.days.includes(day);
  return minute < to && s.days.includes(day === 1 ? 7 : day - 1);
}
const toMinutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

export interface EvaluatorDeps {
  logger: Logger;
  alerts: AlertRecorder;
  /** a device's record, for its alerts */
  device(id: string): Promise<DeviceRecord | undefined>;
  /** the account's IANA time zone, for schedules */
  timeZoneOf(accountId: string): Promise<string>;
  commands?: CommandsService;
}

export class RuleEvaluator {
  constructor(
    private readonly deps: EvaluatorDeps,
    private readonly flusher: StateFlusher,
  ) {}

  /**
   * Runs one input through a rule: synchronous while nothing fires (the usual case); the state is
   * kept here and written by the next flush. An alert is recorded at once (before the state that
   * says it fired is written); one outside the schedule is not raised (its episode may still fire
   * within it). Answers a promise only when something had to be awaited.
   */
  evaluate(
    slot: RuleSlot,
    deviceId: string,
    accountId: string,
    input: RuleInput,
    zones: Map<string, ZoneTest>,
  ): Promise<void> | undefined {
    const rule = slot.rule;
    const zone = rule.params.zone ? zones.get(rule.params.zone) : undefined;
    const before = slot.stored.state;
    const { state, alert } = DETECTORS[rule.alertName](rule, before, input, { zone });
    if (alert) return this.fire(slot, deviceId, accountId, input, state, alert, before);
    if (state !== before) {
      slot.stored.state = state;
      this.flusher.markDirty(slot);
    }
    return undefined;
  }

  private async fire(
    slot: RuleSlot,
    deviceId: string,
    accountId: string,
    input: RuleInput,
    fired: RuleState,
    alert: { text: string; at: number },
    before: RuleState,
  ): Promise<void> {
    const rule = slot.rule;
    let state = fired;
    if (rule.schedule && !inSchedule(rule.schedule, alert.at, await this.deps.timeZoneOf(accountId))) {
      state = EDGES.has(rule.alertName)
        ? { ...state, on: false, since: null, fired: false }
        : { ...state, fired: false };
    } else {
      const where = input.kind === 'position' ? input.position : undefined;
      // not recorded (storage down): the state stays as it was, so the alert fires at the next evaluation
      if (!(await this.raise(rule, deviceId, alert, where))) return;
      if (rule.command) {
        if (rule.command.delaySeconds === 0) this.sendCommand(rule, deviceId);
        else slot.stored.commandDue = alert.at + rule.command.delaySeconds * 1000;
      }
    }
    if (slot.stored.state === before) slot.stored.state = state;
    this.flusher.markDirty(slot);
  }

  /** Raises the alert of a rule through the one alert path; false when it could not be recorded (tried again later). */
  private async raise(
    rule: AlertRule,
    deviceId: string,
    alert: { text: string; at: number },
    where?: { latitude: number; longitude: number },
  ): Promise<boolean> {
    const { logger } = this.deps;
    try {
      const device = await this.deps.device(deviceId);
      if (!device) return true;
      await this.deps.alerts.record(
        device,
        {
          dateTime: new Date(alert.at).toISOString(),
          alertName: rule.alertName,
          text: alert.text,
          alerts: [rule.alertName],
          latitude: where?.latitude,
          longitude: where?.longitude,
        },
        { dedupe: true, rule: rule.id, ruleName: rule.name, channels: rule.notify },
      );
      logger.info({ rule: rule.id, alertName: rule.alertName, deviceId }, 'alert rule fired');
      return true;
    } catch (err) {
      logger.warn(
        { err: (err as Error).message, rule: rule.id, deviceId },
        "an alert rule's alert could not be recorded; evaluated again later",
      );
      return false;
    }
  }

  sendCommand(rule: AlertRule, deviceId: string): void {
    const { commands, logger } = this.deps;
    if (!commands || !rule.command) return;
    const principal: Principal = {
      userId: `rule:${rule.id}`,
      accountId: rule.accountId,
      userName: `rule ${rule.name}`,
      privileges: new Set(['admin']),
      groupId: null,
    };
    commands
      .send(principal, deviceId, { command: rule.command.command, format: rule.command.format })
      .then((r) =>
        logger.info(
          { rule: rule.id, deviceId, command: r.command.id, status: r.command.status },
          'alert rule command sent',
        ),
      )
      .catch((err: Error) =>
        logger.warn({ rule: rule.id, deviceId, err: err.message }, 'alert rule command could not be sent'),
      );
  }
}
