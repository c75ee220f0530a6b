/**
 * A location as the REST API shows it (docs/contract.md §2 "Location fields"). A field without a value
 * is absent, never null, whatever brought the location (REST, MQTT, a tracker frame).
 */
export interface Location {
  dateTime: string;
  latitude: number;
  longitude: number;
  speed?: number;
  course?: number;
  battery?: number;
  fuel?: number;
  fuel2?: number;
  temperature?: number;
  temperature2?: number;
  sensorTime1?: number;
  sensorTime2?: number;
  sensorTime3?: number;
  sensorTime4?: number;
  inactiveSeconds?: number;
  rpm?: number;
  milleage?: number;
  warningTexts?: string[];
  alertTexts?: string[];
  alerts?: string[];
  warnings?: string[];
  hasCriticalAlert?: boolean;
  attributes?: Record<string, unknown>;
  accessoriesAttributes?: Record<string, unknown>[];
  inputs?: boolean[];
  outputs?: boolean[];
  altitude?: number;
  accuracy?: number;
  satellites?: number;
  valid?: boolean;
  serverTime?: string;
  protocol?: string;
  /** km the device travelled up to this fix, computed by trackgate (core/locations/distance.ts); never taken from a client */
  totalDistance?: number;
}

/** A location as a client may send it: any optional field may also be null (unknown, so not stored). */
export type LocationInput = Pick<Location, 'dateTime' | 'latitude' | 'longitude'> & {
  [K in Exclude<keyof Location, 'dateTime' | 'latitude' | 'longitude' | 'totalDistance'>]?: Location[K] | null;
};

/** `location` as the JSON text stored and answered; throws for a value JSON cannot hold. */
export const storedJson = (location: Location): string => JSON.stringify(location);
