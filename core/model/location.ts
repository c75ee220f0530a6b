/** A location as the REST API shows it (CONTRACT.md §2 "Location fields"). */
export interface Location {
  dateTime: string;
  latitude: number;
  longitude: number;
  speed?: number | null;
  course?: number | null;
  battery?: number | null;
  fuel?: number | null;
  fuel2?: number | null;
  temperature?: number | null;
  temperature2?: number | null;
  sensorTime1?: number | null;
  sensorTime2?: number | null;
  sensorTime3?: number | null;
  sensorTime4?: number | null;
  inactiveSeconds?: number | null;
  rpm?: number | null;
  milleage?: number | null;
  warningTexts?: string[];
  alertTexts?: string[];
  alerts?: string[];
  warnings?: string[];
  hasCriticalAlert?: boolean | null;
  attributes?: Record<string, unknown>;
  accessoriesAttributes?: Record<string, unknown>[];
  inputs?: boolean[];
  outputs?: boolean[];
  altitude?: number | null;
  accuracy?: number | null;
  satellites?: number | null;
  valid?: boolean | null;
  serverTime?: string;
  protocol?: string | null;
}
