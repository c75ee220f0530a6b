export type NotificationChannel = 'Email' | 'SMS';
/** notRequested: an alert rule raised it without that channel (its `notify`) */
export type SuppressionReason =
  | 'dailyLimitReached'
  | 'notConfigured'
  | 'deviceExpired'
  | 'noRecipients'
  | 'notRequested';

/** An alert as the REST API shows it (docs/contract.md §2 "Alert fields"). */
export interface Alert {
  id: number;
  dateTime: string;
  latitude: number | null;
  longitude: number | null;
  text: string | null;
  alertName: string;
  alerts: string[];
  notifications: NotificationChannel[];
  suppressed: Partial<Record<NotificationChannel, SuppressionReason>>;
}

/** An alert as a client raises it (REST body, MQTT payload) or the ingest steps make it of a tracker's alarm. */
export interface AlertInput {
  dateTime?: string;
  latitude?: number | null;
  longitude?: number | null;
  text?: string | null;
  alertName: string;
  alerts?: string[];
}
