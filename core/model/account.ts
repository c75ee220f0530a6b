export interface Account {
  id: string;
  name: string;
  licenses: number;
  timeZone: string;
  createdAt: number;
}
