/**
 * The canonical alarm vocabulary decoders report (the field's common names, as used by Traccar's
 * Position.ALARM_* constants), and the platform `alertName` each one becomes.
 */
export const ALARMS = [
  'general', 'sos', 'vibration', 'movement', 'lowspeed', 'overspeed', 'fallDown', 'lowPower',
  'lowBattery', 'fault', 'powerOff', 'powerOn', 'door', 'lock', 'unlock', 'geofence', 'geofenceEnter',
  'geofenceExit', 'gpsAntennaCut', 'accident', 'tow', 'idle', 'highRpm', 'hardAcceleration',
  'hardBraking', 'hardCornering', 'laneChange', 'fatigueDriving', 'powerCut', 'powerRestored',
  'jamming', 'temperature', 'parking', 'bonnet', 'footBrake', 'fuelLeak', 'tampering', 'removing',
] as const;

export type Alarm = (typeof ALARMS)[number];

export function isAlarm(value: string): value is Alarm {
  return (ALARMS as readonly string[]).includes(value);
}
