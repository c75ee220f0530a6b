/**
 * Every canonical alarm name (core/model/alarm.ts) as a value, for a decoder that receives a name
 * as text (OsmAnd's JSON `alarm`). Typed as a record over `Alarm`, so the compiler fails when a
 * name is missing here or not an Alarm.
 */
import type { Alarm } from '../../core/model/alarm.js';

const ALARM_NAMES: Readonly<Record<Alarm, true>> = {
  general: true,
  sos: true,
  vibration: true,
  movement: true,
  lowspeed: true,
  overspeed: true,
  fallDown: true,
  lowPower: true,
  lowBattery: true,
  fault: true,
  powerOff: true,
  powerOn: true,
  door: true,
  lock: true,
  unlock: true,
  geofence: true,
  geofenceEnter: true,
  geofenceExit: true,
  gpsAntennaCut: true,
  accident: true,
  tow: true,
  idle: true,
  highRpm: true,
  hardAcceleration: true,
  hardBraking: true,
  hardCornering: true,
  laneChange: true,
  fatigueDriving: true,
  powerCut: true,
  powerRestored: true,
  jamming: true,
  temperature: true,
  parking: true,
  bonnet: true,
  footBrake: true,
  fuelLeak: true,
  tampering: true,
  removing: true,
};

/** true when `value` is a canonical alarm name (`sos`, `overspeed`, ...) */
export function isAlarm(value: string): value is Alarm {
  return Object.hasOwn(ALARM_NAMES, value);
}
