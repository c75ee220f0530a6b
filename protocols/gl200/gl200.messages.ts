import { Report, decodeStatus, hex, hoursMs, int, macAddress, num, setLocation, timeOf } from './gl200.fields.js';
import {
  PATTERN_BAA,
  PATTERN_BID,
  PATTERN_DAR,
  PATTERN_DTT,
  PATTERN_FRI,
  PATTERN_GSM,
  PATTERN_IDA,
  PATTERN_LOCATION,
  PATTERN_LOCATIONS,
  PATTERN_LSA,
  PATTERN_LSW,
  PATTERN_OBD,
  PATTERN_PNA,
  PATTERN_VER,
  PATTERN_WIF,
  PATTERN_WIFI,
} from './gl200.patterns.js';

/** One text report as the decoder sees it: its type (`FRI`), fields, sentence and the record's model. */
export interface TextReport {
  type: string;
  values: readonly string[];
  sentence: string;
  declaredModel?: string;
}

/** Decodes one report type; undefined when the sentence does not follow the layout (decodeBasic then tries). */
export type TextHandler = (t: TextReport) => Report[] | undefined;

type Groups = RegExpExecArray;

const opt = (v: string | undefined): string | undefined => (v === undefined || v === '' ? undefined : v);

/** the send time in groups `at`..`at+5`, when present */
function sendTime(r: Report, g: Groups, at: number): void {
  if (g[at] !== undefined) r.deviceTime = timeOf(g.slice(at, at + 6), 'send time');
}

/** one location block matched by PATTERN_LOCATION(S) */
function applyLocation(r: Report, m: Groups): void {
  if (opt(m[1])) r.set('hdop', num(m[1], 'hdop'));
  if (opt(m[5]) && opt(m[6]) && m[7] !== undefined) {
    setLocation(r, m[5], m[6], opt(m[2]), opt(m[3]), opt(m[4]));
    r.gpsTime = timeOf(m.slice(7, 13), 'gps time');
  }
  if (m[13]) {
    for (const w of m[13].matchAll(/([0-9a-fA-F]{12}),(-\d+)/g)) r.network.addWifi(macAddress(w[1]), int(w[2]));
  }
  if (opt(m[14]) && opt(m[15]) && opt(m[16]) && opt(m[17])) {
    r.network.addCell(int(m[14], 'mcc'), int(m[15], 'mnc'), hex(m[16], 'lac'), hex(m[17], 'cell id'));
  }
  if (opt(m[18])) r.set('odometer', num(m[18], 'odometer') * 1000);
}

function locationFrom(r: Report, block: string): void {
  const m = PATTERN_LOCATION.exec(block);
  if (m) applyLocation(r, m);
}

function matched(pattern: RegExp, t: TextReport): Groups | undefined {
  return pattern.exec(t.sentence) ?? undefined;
}

/** FRI, GEO, RTL, DOG: N location blocks; the report's other fields belong to the last one */
export const decodeFri: TextHandler = (t) => {
  const g = matched(PATTERN_FRI, t);
  if (!g) return undefined;
  const reports: Report[] = [];
  PATTERN_LOCATIONS.lastIndex = 0;
  for (let m = PATTERN_LOCATIONS.exec(g[6]); m; m = PATTERN_LOCATIONS.exec(g[6])) {
    const r = new Report();
    if (g[2]) r.set('vin', g[2]);
    applyLocation(r, m);
    reports.push(r);
  }
  const last = reports.at(-1);
  if (!last) return undefined;
  const power = opt(g[3]) && int(g[3]);
  if (typeof power === 'number' && power > 10) last.set('power', power / 1000); // only some devices report it here
  if (opt(g[5])) last.set('batteryLevel', int(g[5]));
  if (opt(g[7])) last.set('battery', int(g[7]) / 1000);
  if (opt(g[8])) last.set('batteryLevel', int(g[8]));
  if (opt(g[9])) last.set('temp1', num(g[9]));
  if (opt(g[10])) last.set('odometer', num(g[10]) * 1000);
  last.set('hours', hoursMs(opt(g[11])));
  last.set('adc1', opt(g[12]));
  last.set('adc2', opt(g[13]));
  if (opt(g[14])) last.set('batteryLevel', int(g[14]));
  if (opt(g[15])) decodeStatus(last, hex(g[15], 'device status'));
  if (opt(g[16])) last.set('rpm', int(g[16]));
  if (opt(g[17])) last.set('fuel', int(g[17]));
  if (opt(g[18]) && opt(g[19])) {
    if (opt(g[4])) {
      const reportType = int(g[4]);
      last.set('motion', (reportType & 1) !== 0);
      last.set('charge', (reportType & 2) !== 0);
    }
    last.set('rssi', int(g[18]));
    last.set('batteryLevel', int(g[19]));
  }
  if (opt(g[20])) last.set('odometer', num(g[20]) * 1000);
  if (opt(g[21])) last.set('batteryLevel', int(g[21]));
  sendTime(last, g, 22);
  return reports;
};

/** OBD: engine data, one location block */
export const decodeObd: TextHandler = (t) => {
  const g = matched(PATTERN_OBD, t);
  if (!g) return undefined;
  const r = new Report();
  if (opt(g[2])) r.set('rpm', int(g[2]));
  if (opt(g[3])) r.set('obdSpeed', int(g[3]));
  if (opt(g[4])) r.set('temp1', int(g[4]));
  if (opt(g[5]) && /^\d/.test(g[5])) r.set('fuelConsumption', num(g[5]));
  if (opt(g[6])) r.set('dtcsClearedDistance', int(g[6]));
  if (opt(g[7])) r.set('obdConnect', g[7] === '1');
  if (opt(g[8])) r.set('dtcsNumber', int(g[8]));
  r.set('dtcsCodes', g[9]);
  if (opt(g[10])) r.set('throttle', int(g[10]));
  if (opt(g[11])) r.set('fuel', int(g[11]));
  r.set('obdOdometer', int(g[12]) * 1000);
  locationFrom(r, g[13]);
  if (opt(g[14])) r.set('obdOdometer', Math.trunc(num(g[14]) * 1000));
  sendTime(r, g, 15);
  return [r];
};

/** LSW / TSW: input 1 (LSW) or input 2 (TSW) changed */
export const decodeLsw: TextHandler = (t) => {
  const g = matched(PATTERN_LSW, t);
  if (!g) return undefined;
  const r = new Report();
  r.set(t.type === 'LSW' ? 'in1' : 'in2', g[2] === '1');
  locationFrom(r, g[3]);
  sendTime(r, g, 4);
  return [r];
};

/** IDA: driver identification by RFID */
export const decodeIda: TextHandler = (t) => {
  const g = matched(PATTERN_IDA, t);
  if (!g) return undefined;
  const r = new Report();
  r.set('driverUniqueId', g[2]);
  locationFrom(r, g[3]);
  r.set('odometer', num(g[4]) * 1000);
  sendTime(r, g, 5);
  return [r];
};

/** WIF: Wi-Fi access points seen, no GPS fix */
export const decodeWif: TextHandler = (t) => {
  const g = matched(PATTERN_WIF, t);
  if (!g) return undefined;
  const r = new Report();
  for (const w of g[3].matchAll(PATTERN_WIFI)) r.network.addWifi(macAddress(w[1]), int(w[2]));
  r.set('batteryLevel', int(g[4]));
  sendTime(r, g, 5);
  return [r];
};

/** GSM: serving and neighbour cells, groups of mcc, mnc, lac hex, cell hex, rssi, reserved */
export const decodeGsm: TextHandler = (t) => {
  const g = matched(PATTERN_GSM, t);
  if (!g) return undefined;
  const r = new Report();
  const data = g[2].split(',');
  for (let i = 0; i + 4 < data.length; i += 6) {
    if (data[i] && data[i + 1] && data[i + 2] && data[i + 3]) {
      r.network.addCell(
        int(data[i], 'mcc'),
        int(data[i + 1], 'mnc'),
        hex(data[i + 2], 'lac'),
        hex(data[i + 3], 'cell id'),
        data[i + 4] ? int(data[i + 4], 'rssi') : undefined,
      );
    }
  }
  sendTime(r, g, 3);
  return [r];
};

/** VER: device type, firmware and hardware versions */
export const decodeVer: TextHandler = (t) => {
  const g = matched(PATTERN_VER, t);
  if (!g) return undefined;
  const r = new Report();
  r.set('deviceType', g[2]);
  r.set('versionFw', hex(g[3]));
  r.set('versionHw', hex(g[4]));
  sendTime(r, g, 5);
  return [r];
};

/** PNA / PFA: the device powered on / off */
export const decodePna: TextHandler = (t) => {
  const g = matched(PATTERN_PNA, t);
  if (!g) return undefined;
  const r = new Report();
  r.addAlarm(t.type === 'PNA' ? 'powerOn' : 'powerOff');
  sendTime(r, g, 2);
  return [r];
};

/** DAR: driver attention (1: fatigue, with its degree) */
export const decodeDar: TextHandler = (t) => {
  const g = matched(PATTERN_DAR, t);
  if (!g) return undefined;
  const r = new Report();
  const warningType = int(g[2]);
  if (warningType === 1) {
    r.addAlarm('fatigueDriving');
    r.set('fatigueDegree', int(g[3]));
  } else {
    r.set('warningType', warningType);
  }
  locationFrom(r, g[4]);
  sendTime(r, g, 5);
  return [r];
};

/** DTT: transparent data from a serial accessory (hex ASCII); a fuel sensor's `COMB,<id>,<level>` gives fuel */
export const decodeDtt: TextHandler = (t) => {
  const g = matched(PATTERN_DTT, t);
  if (!g) return undefined;
  const r = new Report();
  const data = Buffer.from(g[2].length % 2 ? g[2].slice(0, -1) : g[2], 'hex').toString('latin1');
  const fuel = data.includes('COMB') ? data.split(',')[2] : undefined;
  if (fuel !== undefined && /^-?\d+(?:\.\d+)?$/.test(fuel.trim())) r.set('fuel', Number(fuel.trim()));
  else r.set('result', data);
  sendTime(r, g, 3);
  return [r];
};

/** BAA: Bluetooth accessory alarm; the append mask says which accessory fields follow */
export const decodeBaa: TextHandler = (t) => {
  const g = matched(PATTERN_BAA, t);
  if (!g) return undefined;
  const r = new Report();
  const mask = hex(g[2]);
  const values = g[3].split(',');
  let i = 0;
  if (mask & 0x01) r.set('accessoryName', values[i++]);
  if (mask & 0x02) r.set('accessoryMac', values[i++]);
  if (mask & 0x04) r.set('accessoryStatus', int(values[i++] ?? ''));
  if (mask & 0x08) r.set('accessoryVoltage', int(values[i++] ?? '') / 1000);
  if (mask & 0x10) r.set('accessoryTemp', int(values[i++] ?? ''));
  if (mask & 0x20) r.set('accessoryHumidity', int(values[i] ?? ''));
  locationFrom(r, g[4]);
  sendTime(r, g, 5);
  return [r];
};

/** BID: Bluetooth accessory identified */
export const decodeBid: TextHandler = (t) => {
  const g = matched(PATTERN_BID, t);
  if (!g) return undefined;
  const r = new Report();
  const mask = hex(g[2]);
  const values = g[3].split(',');
  let i = 0;
  if (mask & 0x02) r.set('accessoryMac', values[i++]);
  if (mask & 0x08) r.set('accessoryVoltage', int(values[i] ?? '') / 1000);
  locationFrom(r, g[4]);
  sendTime(r, g, 5);
  return [r];
};

/** LSA: light sensor alarm */
export const decodeLsa: TextHandler = (t) => {
  const g = matched(PATTERN_LSA, t);
  if (!g) return undefined;
  const r = new Report();
  locationFrom(r, g[2]);
  r.set('lightLevel', int(g[3]));
  r.set('batteryLevel', int(g[4]));
  if (opt(g[5])) r.set('temp1', num(g[5]));
  sendTime(r, g, 6);
  return [r];
};
