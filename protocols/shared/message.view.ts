/**
 * A decoded message as people read it next to the REST API (`trackgate decode`, the raw-frame feed
 * live/{id}/frames): its position under the REST location's names (docs/contract.md §5: `dateTime`,
 * `latitude`, `longitude`, `speed` km/h, `course`, `altitude`, and `accuracy`, `satellites`,
 * `valid`), then the decoder's `alarms` and `attributes`. A message without a position or a fix
 * time has none of those keys.
 */
import type { DecodedMessage } from '../types.js';
import type { Alarm } from '../../core/model/alarm.js';

export interface MessageView {
  dateTime?: string;
  latitude?: number;
  longitude?: number;
  speed?: number;
  course?: number;
  altitude?: number;
  accuracy?: number;
  satellites?: number;
  valid?: boolean;
  alarms: Alarm[];
  attributes: DecodedMessage['attributes'];
}

export function messageView(m: DecodedMessage): MessageView {
  const v: Partial<MessageView> = {};
  if (m.fixTime) v.dateTime = m.fixTime.toISOString();
  const l = m.location;
  if (l) {
    // the REST location's key order (core/ingest/ingest.steps.ts toLocation)
    v.latitude = l.latitudeDeg;
    v.longitude = l.longitudeDeg;
    if (l.speedKmh !== undefined) v.speed = l.speedKmh;
    if (l.courseDeg !== undefined) v.course = l.courseDeg;
    if (l.altitudeM !== undefined) v.altitude = l.altitudeM;
    if (l.accuracyM !== undefined) v.accuracy = l.accuracyM;
    if (l.satellites !== undefined) v.satellites = l.satellites;
    v.valid = l.valid;
  }
  v.alarms = m.alarms;
  v.attributes = m.attributes;
  return v as MessageView;
}
