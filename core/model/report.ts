import type { Alarm } from './alarm.js';
import type { Alert, AlertInput } from './alert.js';
import type { DeviceRecord } from './device.js';
import type { Location } from './location.js';

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

/**
 * The one report type the ingest takes (core/ingest/ingest.service.ts), whatever carried it: a
 * tracker's PositionReport as decoded, or what a client sent in the REST shapes (REST bodies, MQTT
 * `devices/{id}/locations` and `/alerts`), converted where it arrived (core/model/input.reports.ts).
 * INGEST_STEPS check, store and raise both alike.
 */
export interface Report extends PositionReport {
  /**
   * The location as a client sent it in the REST shape, fields without a value left out: stored
   * as given. `fixTime` and `location` carry its position for the checks. The report's own copy:
   * the ingest steps complete it in place into the stored location.
   */
  given?: Location;
  /** alerts a client raised by name */
  raised?: AlertInput[];
}

/**
 * The part of the one ingest path (core/ingest/ingest.service.ts IngestService) that a client's
 * reports go through: the alerts and locations services take it in their deps by this name, as the
 * ingest sits above them (it stores with their repositories).
 */
export interface ReportIntake {
  submit(
    device: DeviceRecord,
    protocol: string,
    reports: readonly Report[],
    options?: { allOrNothing?: boolean; dedupeAlerts?: boolean },
  ): Promise<{ locations: Location[]; alerts: Alert[]; refused?: { index: number; field: string; message: string } }>;
}
