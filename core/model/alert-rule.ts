/**
 * An alert rule of an account (docs/contract.md "Alert rules and zones", *ext* `/api/alertRules`): when
 * a device (listed, or in the group) meets the condition its `alertName` names, for at least
 * `minDurationSeconds`, within the schedule, one alert is raised per episode, notified on the
 * channels of `notify`, and `command` is sent after its delay.
 */
import type { CommandFormat } from './command.js';

/** The platform alert names a rule can raise, with the params each takes (see RULE_PARAMS in core/rules/alert-rules.service.ts). */
export const RULE_ALERT_NAMES = [
  'SpeedLimit',
  'SpeedLower',
  'ForbiddenArea',
  'AllowedArea',
  'CheckPoint',
  'CheckArea',
  'Offline',
  'NoMovementTime',
  'IdleTime',
  'LowBattery',
  'BatteryVoltage',
  'Sensor1On',
  'Sensor1Off',
  'Sensor2On',
  'Sensor2Off',
  'Sensor3On',
  'Sensor3Off',
  'Sensor4On',
  'Sensor4Off',
  'TemperatureGreaterThan',
  'TemperatureLowerThan',
  'FuelLessThan',
  'FuelJumpDown',
  'FuelJumpUp',
  'AttributeEquals',
  'AttributeLessThan',
  'AttributeGreaterThan',
  'GPSNoSignal',
  'Mileage',
  'ExpiredDate',
] as const;
export type RuleAlertName = (typeof RULE_ALERT_NAMES)[number];

/** What a rule compares with; which apply depends on the alert name. */
export interface RuleParams {
  /** km/h: SpeedLimit (over), SpeedLower (under), NoMovementTime/IdleTime (moving above; default 3) */
  speed?: number;
  /** the zone's id: ForbiddenArea, AllowedArea, CheckPoint, CheckArea */
  zone?: string;
  /** minutes: Offline (no report for), NoMovementTime / IdleTime (stopped for), GPSNoSignal (no valid fix for) */
  minutes?: number;
  /** attribute name: AttributeEquals/LessThan/GreaterThan (also the sensor's attribute for Sensor*, default `in<N>`) */
  attribute?: string;
  /** the value compared with: AttributeEquals (string, number or boolean), AttributeLessThan/GreaterThan,
   * LowBattery (%, default 20), BatteryVoltage (V, below), TemperatureGreaterThan/LowerThan (°C),
   * FuelLessThan (level), FuelJumpDown/Up (change between two reports), Mileage (km, reached),
   * ExpiredDate (days before the device's expiry) */
  value?: string | number | boolean;
}

export interface RuleSchedule {
  /** ISO weekdays, 1 = Monday … 7 = Sunday */
  days: number[];
  /** "HH:MM" in the account's time zone; `to` before `from` spans midnight */
  from: string;
  to: string;
}

export interface AlertRule {
  id: string;
  accountId: string;
  name: string;
  alertName: RuleAlertName;
  /** the devices it watches; null: none listed (then `group`) */
  devices: string[] | null;
  /** a group whose devices it watches; null: none */
  group: string | null;
  enabled: boolean;
  params: RuleParams;
  /** the condition must hold this long before the alert is raised (0: at once) */
  minDurationSeconds: number;
  /** null: always */
  schedule: RuleSchedule | null;
  notify: { email: boolean; sms: boolean };
  /** sent to the device through the commands path, `delaySeconds` after the alert */
  command: { command: string; format: CommandFormat; delaySeconds: number } | null;
  created: number;
}
