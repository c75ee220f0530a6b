/** A zone of an account (docs/contract.md "Alert rules and zones", *ext* `/api/zones`). */
export type ZoneType = 'circle' | 'polygon';

export interface Zone {
  id: string;
  accountId: string;
  name: string;
  type: ZoneType;
  /** circle: its centre */
  center: { latitude: number; longitude: number } | null;
  /** circle: its radius in metres */
  radius: number | null;
  /** polygon: a closed ring of [longitude, latitude] pairs (GeoJSON order), first point = last point */
  polygon: [number, number][] | null;
  created: number;
}
