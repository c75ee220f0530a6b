/**
 * The canonical alarm vocabulary decoders report (the field's common names, as used by Traccar's
 * Position.ALARM_* constants), and the platform `alertName` each one becomes
 * (core/alerts/alarm-names.ts). A plain type: protocols/shared/alarms.ts holds the same names as
 * a value, for decoders that must tell a reported name apart, and the compiler keeps the two equal.
 */
export type Alarm =
  | 'general' | 'sos' | 'vibration' | 'movement' | 'lowspeed' | 'overspeed' | 'fallDown'
  | 'lowPower' | 'lowBattery' | 'fault' | 'powerOff' | 'powerOn' | 'door' | 'lock' | 'unlock'
  | 'geofence' | 'geofenceEnter' | 'geofenceExit' | 'gpsAntennaCut' | 'accident' | 'tow' | 'idle'
  | 'highRpm' | 'hardAcceleration' | 'hardBraking' | 'hardCornering' | 'laneChange'
  | 'fatigueDriving' | 'powerCut' | 'powerRestored' | 'jamming' | 'temperature' | 'parking'
  | 'bonnet' | 'footBrake' | 'fuelLeak' | 'tampering' | 'removing';
