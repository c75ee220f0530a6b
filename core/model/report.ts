import type { Alarm } from './alarm.js';

/**
 * What a tracker reported, in the core's units: the shape every decoder returns
 * (protocols/types.ts DecodedMessage is this same shape) and what MQTT payloads become.
 */
export interface PositionReport {
  /** fix time, UTC; absent: the receive time is used */
  fixTime?: Date;
  location?: {
    latitudeDeg: number;
    longitudeDeg: number;
    valid: boolean;
    speedKmh?: number;
    courseDeg?: number;
    altitudeM?: number;
    accuracyM?: number;
    satellites?: number;
  };
  alarms: Alarm[];
  attributes: Record<string, string | number | boolean>;
}
