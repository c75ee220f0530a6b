export interface Account {
  id: string;
  name: string;
  licenses: number;
  timeZone: string;
  createdAt: number;
  /** days of locations and alerts kept: null follows TRACKGATE_RETENTION_DAYS, 0 keeps everything */
  retentionDays?: number | null;
}
