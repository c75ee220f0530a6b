import type { AttributeValue } from '../types.js';

/**
 * Cell towers and Wi-Fi access points a tracker reports beside (or instead of) a GPS fix. They are
 * stored as one `network` attribute holding JSON in the shape of Traccar's `Network` model
 * (`cellTowers[]`, `wifiAccessPoints[]`), which is also what geolocation services take.
 */
export interface CellTower {
  mobileCountryCode?: number;
  mobileNetworkCode?: number;
  locationAreaCode: number;
  cellId: number;
  signalStrength?: number;
}

export interface WifiAccessPoint {
  macAddress: string;
  signalStrength?: number;
}

export class NetworkInfo {
  readonly cellTowers: CellTower[] = [];
  readonly wifiAccessPoints: WifiAccessPoint[] = [];

  addCell(mcc: number | undefined, mnc: number | undefined, lac: number, cid: number, rssi?: number): void {
    const cell: CellTower = { locationAreaCode: lac, cellId: cid };
    if (mcc !== undefined) cell.mobileCountryCode = mcc;
    if (mnc !== undefined) cell.mobileNetworkCode = mnc;
    if (rssi !== undefined) cell.signalStrength = rssi;
    this.cellTowers.push(cell);
  }

  addWifi(macAddress: string, signalStrength?: number): void {
    this.wifiAccessPoints.push(signalStrength === undefined ? { macAddress } : { macAddress, signalStrength });
  }

  get empty(): boolean {
    return this.cellTowers.length === 0 && this.wifiAccessPoints.length === 0;
  }

  /** sets `attributes.network` (JSON) when anything was reported */
  applyTo(attributes: Record<string, AttributeValue>): void {
    if (this.empty) return;
    const json: { cellTowers?: CellTower[]; wifiAccessPoints?: WifiAccessPoint[] } = {};
    if (this.cellTowers.length) json.cellTowers = this.cellTowers;
    if (this.wifiAccessPoints.length) json.wifiAccessPoints = this.wifiAccessPoints;
    attributes.network = JSON.stringify(json);
  }
}
