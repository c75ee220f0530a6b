/** The device settings of atrack devices (DecodeContext.options), with the reference's defaults. */
import type { Alarm } from '../../core/model/alarm.js';
import { isAlarm } from '../shared/alarms.js';
import type { DecodeContext } from '../types.js';

/** The decoder settings of one device (DecodeContext.options), read the way Traccar reads its own. */
export interface AtrackOptions {
  /** reports carry custom-format fields after the fixed ones */
  custom: boolean;
  /** the configured custom form (`%AT%BV…`); absent: every record names its own (`%CI…`) */
  form?: string;
  /** binary records start with a 7-byte date (u16 year, month, day, hour, minute, second) */
  longDate: boolean;
  /** 1: a `%BC` beacon field is a list of length-prefixed tags instead of `mode:mask:hex` */
  frameMask: number;
  /** the `FULS:` fuel message counts in decimal instead of hex */
  decimalFuel: boolean;
  /** report type -> alarm (`alarmMap=1=sos,2=powerCut`) */
  alarmMap: ReadonlyMap<number, Alarm>;
}

/** Java's Boolean.parseBoolean: `true` in any case, everything else false */
const flag = (v: string | undefined): boolean => v?.toLowerCase() === 'true';

function alarmMap(v: string | undefined): Map<number, Alarm> {
  const map = new Map<number, Alarm>();
  for (const pair of (v ?? '').split(',')) {
    const m = /^\s*(\d+)=(\w+)\s*$/.exec(pair);
    if (m && isAlarm(m[2])) map.set(Number(m[1]), m[2]);
  }
  return map;
}

/**
 * The settings, defaults as in Traccar: custom off, no form, short dates, frame mask 0, hex fuel,
 * no alarm map. A form turns custom on (as `atrack.form` does in Traccar's configuration) unless
 * `custom=false` is given as well.
 */
export function atrackOptions(ctx: DecodeContext): AtrackOptions {
  const o = ctx.options ?? {};
  const form = o.form?.trim() ? o.form.trim() : undefined;
  const frameMask = Number.parseInt(o.frameMask ?? '', 10);
  return {
    custom: o.custom === undefined ? form !== undefined : flag(o.custom),
    ...(form !== undefined && { form }),
    longDate: flag(o.longDate),
    frameMask: Number.isFinite(frameMask) ? frameMask : 0,
    decimalFuel: flag(o.decimalFuel),
    alarmMap: alarmMap(o.alarmMap),
  };
}
