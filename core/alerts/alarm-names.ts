/**
 * How a tracker alarm becomes a platform alert: the canonical alarm name (core/model/alarm.ts)
 * maps to the platform's `alertName`. Where the platform has a name (SOSButton, SpeedLimit,
 * LowBattery, GPSUnplugged, Vibration, ForbiddenArea, HarshBraking, …) it is used; others take
 * the alarm's name in PascalCase.
 */
import type { Alarm } from '../model/alarm.js';

export const ALERT_NAME_BY_ALARM: Readonly<Record<Alarm, string>> = Object.freeze({
  general: 'General',
  sos: 'SOSButton',
  vibration: 'Vibration',
  movement: 'Movement',
  lowspeed: 'LowSpeed',
  overspeed: 'SpeedLimit',
  fallDown: 'FallDown',
  lowPower: 'LowPower',
  lowBattery: 'LowBattery',
  fault: 'Fault',
  powerOff: 'PowerOff',
  powerOn: 'PowerOn',
  door: 'Door',
  lock: 'Lock',
  unlock: 'Unlock',
  geofence: 'ForbiddenArea',
  geofenceEnter: 'GeofenceEnter',
  geofenceExit: 'GeofenceExit',
  gpsAntennaCut: 'GPSUnplugged',
  accident: 'Accident',
  tow: 'Tow',
  idle: 'Idle',
  highRpm: 'HighRPM',
  hardAcceleration: 'HarshAcceleration',
  hardBraking: 'HarshBraking',
  hardCornering: 'HarshCornering',
  laneChange: 'LaneChange',
  fatigueDriving: 'FatigueDriving',
  powerCut: 'PowerCut',
  powerRestored: 'PowerRestored',
  jamming: 'Jamming',
  temperature: 'Temperature',
  parking: 'Parking',
  bonnet: 'Bonnet',
  footBrake: 'FootBrake',
  fuelLeak: 'FuelLeak',
  tampering: 'Tampering',
  removing: 'Removing',
});

/** Alarms that set `hasCriticalAlert` on the location. */
export const CRITICAL_ALARMS: ReadonlySet<Alarm> = new Set<Alarm>([
  'sos',
  'accident',
  'fallDown',
  'tow',
  'removing',
  'tampering',
]);
