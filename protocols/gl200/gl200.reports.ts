import type { CommandResult } from '../types.js';
import { HARSH_BEHAVIOUR, REPORT_ALARMS } from './gl200.constants.js';
import {
  Fields,
  Report,
  bit,
  decodeStatus,
  hex,
  hoursMs,
  int,
  modelOf,
  num,
  readLocation,
  setLocation,
  time14,
} from './gl200.fields.js';
import type { TextHandler, TextReport } from './gl200.messages.js';

/**
 * Reports read field by field, where the model decides the layout (Traccar
 * Gl200TextProtocolDecoder decodeInf, decodeEri, decodeIgn, decodeLbs, decodeDat, decodeBasic).
 */

/** the send time (second-to-last field), when it is one */
function sendTime(r: Report, f: Fields): void {
  const value = f.fromEnd(2);
  if (value) r.deviceTime = time14(value, 'send time');
}

/** `F<n>` is a fuel level, anything else millivolts (decodeAnalog) */
function analog(r: Report, index: number, value: string): void {
  if (value.startsWith('F')) r.set(`fuel${index}`, int(value.substring(1), 'fuel'));
  else r.set(`adc${index}`, int(value, 'analog input') / 1000);
}

const filled = (f: Fields): string | undefined => {
  const v = f.next();
  return v === '' ? undefined : v;
};

/** `<header>,<version>,<imei>,`: returns the model and leaves the cursor on the device name */
function start(t: TextReport): { f: Fields; model: string } {
  const f = new Fields(t.values);
  f.skip(); // header
  const version = f.next();
  f.skip(); // imei
  return { f, model: modelOf(version, t.declaredModel) };
}

/** INF: device information (state, ICCID, signal, power and battery) */
export const decodeInf: TextHandler = (t) => {
  if (t.values[1] !== undefined && t.values[1].length > 10) return undefined; // the GT300 layout
  const { f, model } = start(t);
  const r = new Report();
  f.skip(); // device name
  const state = filled(f);
  if (state !== undefined) {
    const s = hex(state, 'state');
    if (s === 0x16 || s === 0x1a || s === 0x12) {
      r.set('ignition', false);
      r.set('motion', true);
    } else if (s === 0x11) {
      r.set('ignition', false);
      r.set('motion', false);
    } else if (s === 0x21) {
      r.set('ignition', true);
      r.set('motion', false);
    } else if (s === 0x22) {
      r.set('ignition', true);
      r.set('motion', true);
    } else if (s === 0x41) r.set('motion', false);
    else if (s === 0x42) r.set('motion', true);
  }
  r.set('iccid', filled(f));
  const rssi = filled(f);
  if (rssi !== undefined) r.set('rssi', int(rssi, 'rssi'));
  f.skip(2); // signal quality, external power supply
  if (f.at(1).length >= 12) {
    f.skip(); // BLE sensor MAC
    r.set('deviceTemp', int(f.next(), 'device temperature'));
    r.set('humidity', int(f.next(), 'humidity'));
  }
  const power = filled(f);
  if (power !== undefined) {
    if (power.includes('.')) r.set('odometer', num(power, 'odometer') * 1000);
    else r.set('power', int(power, 'power') / 1000);
  }
  if (model !== 'GV500VC') {
    if (model === 'GV350M' || model === 'GV310LAU')
      f.skip(); // expand mask or network type
    else {
      const power2 = filled(f);
      if (power2 !== undefined) r.set('power2', int(power2, 'power') / 1000);
    }
  }
  const battery = filled(f);
  if (battery !== undefined) r.set('battery', num(battery, 'battery'));
  const charging = filled(f);
  if (charging !== undefined && int(charging, 'charging') === 1) r.set('charge', true);
  if (model === 'GV310LAU') {
    f.skip(5); // led state, power saving mode, external antenna, last fix time, pin mask
    for (const n of [1, 2, 3]) r.set(`adc${n}`, int(f.next(), 'analog input'));
  }
  sendTime(r, f);
  return [r];
};

/** ERI after its positions: odometer, hours and analog inputs, as the model has them */
function eriAnalogs(r: Report, model: string, f: Fields): void {
  const gl5 = model.startsWith('GL5');
  if (!gl5) {
    const odometer = filled(f);
    if (odometer !== undefined) r.set('odometer', num(odometer, 'odometer') * 1000);
  }
  if (!gl5 && model !== 'GL320M') {
    r.set('hours', hoursMs(f.next()));
    const adc1 = filled(f);
    if (adc1 !== undefined) analog(r, 1, adc1);
  }
  if (model.startsWith('GV') && !model.startsWith('GV6') && model !== 'GV350M') {
    const adc2 = filled(f);
    if (adc2 !== undefined) analog(r, 2, adc2);
  }
  if (model === 'GV200' || model === 'GV310LAU' || model === 'GV350CEU') {
    const adc3 = filled(f);
    if (adc3 !== undefined) analog(r, 3, adc3);
  } else if ((model.startsWith('GV3') && model.endsWith('CEU')) || model.startsWith('GV600M')) {
    f.skip(); // reserved
  }
}

/** ERI: battery, inputs and outputs, motion or device status, as the model has them */
function eriDeviceState(r: Report, model: string, mask: number, f: Fields): void {
  const batteryLevel = (): void => {
    const v = filled(f);
    if (v !== undefined) r.set('batteryLevel', int(v, 'battery level'));
  };
  if (model.startsWith('GL5')) {
    batteryLevel();
    f.skip(); // mode selection
    const motion = filled(f);
    if (motion !== undefined) r.set('motion', int(motion, 'motion') > 0);
  } else if (model === 'GV200') {
    const input = filled(f);
    if (input !== undefined) r.set('input', hex(input, 'inputs'));
    const output = filled(f);
    if (output !== undefined) r.set('output', hex(output, 'outputs'));
    f.skip(); // uart device type
  } else if (model === 'GL320M') {
    batteryLevel();
    if (bit(mask, 7)) {
      const external = filled(f);
      if (external !== undefined) r.set('externalBattery', int(external, 'external battery'));
    }
  } else {
    batteryLevel();
    const status = filled(f);
    if (status !== undefined) decodeStatus(r, hex(status, 'device status'));
    f.skip(); // uart device type
  }
}

/** ERI mask bits 0, 29 and 1: the fuel level, the fuel data block, 1-wire temperatures */
function eriFuelAndOneWire(r: Report, model: string, mask: number, f: Fields): void {
  if (bit(mask, 0) && model !== 'GV350M') {
    const fuel = filled(f);
    if (fuel !== undefined) r.set('fuel', hex(fuel, 'fuel'));
  }
  if (bit(mask, 29)) {
    f.skip(2); // reserved
    const dataMask = hex(f.next(), 'fuel data mask');
    if (bit(dataMask, 0)) {
      const fuel = filled(f);
      if (fuel !== undefined) r.set('fuel', hex(fuel, 'fuel'));
    }
    if (bit(dataMask, 1)) f.skip(); // fuel height
  }
  if (bit(mask, 1)) {
    // 1-wire temperature sensors
    const devices = int(f.next(), 'sensor count');
    for (let i = 1; i <= devices && f.i < f.length; i++) {
      f.skip(2); // id, type
      const raw = filled(f);
      if (raw !== undefined) r.set(`temp${i}`, ((hex(raw, 'temperature') << 16) >> 16) * 0.0625);
    }
  }
}

/** ERI mask bits 3, 4 (and 0 on the GV350M), 7 and 8: fuel sensors, temperature and humidity sensors, BLE tags */
function eriSensors(r: Report, model: string, mask: number, f: Fields): void {
  if ((bit(mask, 3) || bit(mask, 4) || (bit(mask, 0) && model === 'GV350M')) && f.i < f.length - 2) {
    const devices = int(f.next(), 'fuel sensor count');
    for (let i = 1; i <= devices && f.i < f.length; i++) {
      f.skip(); // type
      if (model === 'GV350M') {
        f.skip(); // uart id
        if (bit(mask, 0)) r.set('fuel', hex(f.next(), 'fuel'));
      }
      if (bit(mask, 3)) r.set('fuel', num(f.next(), 'fuel'));
      if (bit(mask, 4)) f.skip(); // volume
      if (bit(mask, 10)) f.skip(); // fuel temperature
    }
  }
  if (bit(mask, 7) && model !== 'GL320M') {
    // temperature and humidity sensors
    const devices = int(f.next(), 'sensor count');
    for (let i = 1; i <= devices && f.i < f.length; i++) {
      f.skip(); // serial number
      const type = int(f.next(), 'sensor type');
      f.skip(type === 2 ? 2 : 1); // temperature [, humidity]
    }
  }
  if (bit(mask, 8) && model !== 'GL320M') readBleTags(r, model, f);
}

/** ERI: the FRI report with an extension mask (fuel sensors, 1-wire temperatures, BLE tags) */
export const decodeEri: TextHandler = (t) => {
  const { f, model } = start(t);
  const vin = model === 'GV500' ? f.next() : undefined;
  f.skip(); // device name
  const mask = hex(f.next(), 'ERI mask');
  const power = filled(f);
  f.skip(); // report type
  const count = int(f.next(), 'number of positions');
  const reports: Report[] = [];
  for (let i = 0; i < count && f.i < f.length; i++) {
    const r = new Report();
    if (vin) r.set('vin', vin);
    readLocation(r, model, f);
    reports.push(r);
  }
  const r = reports.at(-1);
  if (!r) return undefined;
  sendTime(r, f);
  if (power !== undefined) r.set('power', int(power, 'power') / 1000);
  eriAnalogs(r, model, f);
  eriDeviceState(r, model, mask, f);
  eriFuelAndOneWire(r, model, mask, f);
  if (bit(mask, 2)) return reports; // CAN data follows; not decoded here
  eriSensors(r, model, mask, f);
  return reports;
};

/** BLE accessories of an ERI report: id, temperature, humidity and battery by each one's mask */
function readBleTags(r: Report, model: string, f: Fields): void {
  const devices = int(f.next(), 'accessory count');
  for (let i = 1; i <= devices && f.i < f.length; i++) {
    f.skip(3); // index, type, model
    if (model.startsWith('GV600M')) f.skip(); // raw data length
    f.skip(); // raw data
    const m = hex(f.next(), 'accessory mask');
    if (bit(m, 0)) f.skip(); // name
    if (bit(m, 1)) r.set(`tag${i}Id`, f.next());
    if (bit(m, 2)) f.skip(); // status
    if (bit(m, 3)) f.skip(); // battery level
    if (bit(m, 4)) {
      const temp = filled(f);
      if (temp !== undefined) r.set(`tag${i}Temp`, num(temp, 'tag temperature'));
    }
    if (bit(m, 5)) {
      const humidity = filled(f);
      if (humidity !== undefined) r.set(`tag${i}Humidity`, int(humidity, 'tag humidity'));
    }
    for (const b of [7, 8, 9, 10, 11, 12]) if (bit(m, b)) f.skip(); // io, event, tire pressure, timestamp, enhanced temperature, magnet
    if (bit(m, 13)) {
      const battery = filled(f);
      if (battery !== undefined) r.set(`tag${i}Battery`, int(battery, 'tag battery'));
    }
    if (bit(m, 14)) f.skip(); // relay
  }
}

/** IGN / IGF (ignition), VGN / VGF (virtual ignition): on or off, with the location */
export const decodeIgn: TextHandler = (t) => {
  const { f, model } = start(t);
  const r = new Report();
  f.skip(); // device name
  if (model === 'CV200') f.skip(2); // reserved, report type
  f.skip(); // duration of the previous ignition state
  readLocation(r, model, f);
  r.set('ignition', t.type.includes('GN'));
  r.set('hours', hoursMs(f.next()));
  const odometer = filled(f);
  if (odometer !== undefined) r.set('odometer', num(odometer, 'odometer') * 1000);
  sendTime(r, f);
  return [r];
};

/** LBS: battery and up to seven cells, no GPS */
export const decodeLbs: TextHandler = (t) => {
  const { f } = start(t);
  const r = new Report();
  f.skip(3); // device name, trigger type, report type
  r.set('batteryLevel', int(f.next(), 'battery level'));
  f.skip(5); // reserved, motion status, reserved, reserved, component expansion mask
  for (let i = 0; i <= 6 && f.i < f.length; i++) {
    if (f.at(1)) {
      r.network.addCell(
        int(f.next(), 'mcc'),
        int(f.next(), 'mnc'),
        hex(f.next(), 'lac'),
        hex(f.next(), 'cell id'),
        int(f.next(), 'rssi'),
      );
    } else {
      f.skip(5);
    }
    f.skip(); // reserved
  }
  sendTime(r, f);
  return [r];
};

/** DAT: data from a serial accessory, with the location */
export const decodeDat: TextHandler = (t) => {
  const { f, model } = start(t);
  const r = new Report();
  f.skip(4); // device name, report type, reserved, reserved
  r.set('data', f.next());
  readLocation(r, model, f);
  sendTime(r, f);
  return [r];
};

const COORDINATE = /^-?\d{1,3}\.\d{6}$/;
const MCC = /^\d{4}$/;
const LAC = /^[0-9a-fA-F]{4}$/;
const CELL = /^[0-9a-fA-F]{4,8}$/;

/**
 * Any other report (and one whose layout a handler did not recognise), read by looking for its
 * fields (decodeBasic): the report type's meaning, a location (two coordinates in a row, with
 * hdop, speed, azimuth and altitude before them and the GPS time after), a cell, the send time,
 * and the alarm of the report type (SOS, SPD, BPL, ...). Nothing recognisable: no report.
 */
export function decodeBasic(t: TextReport): Report[] {
  const v = t.values;
  const r = new Report();
  let i = 3;
  if (/^[0-9a-fA-F]{1,2}$/.test(v[i + 2] ?? '')) {
    const reportType = parseInt(v[i + 2], 16);
    switch (t.type) {
      case 'STR':
      case 'CTN': {
        const battery = v[i + 5] ?? '';
        if (/^GL5[03]0$/.test(modelOf(v[1] ?? '', t.declaredModel)) && battery)
          r.set('batteryLevel', int(battery, 'battery level'));
        break;
      }
      case 'NMR':
        r.set('motion', reportType === 1);
        break;
      case 'DIS':
        r.set(`in${Math.floor(reportType / 0x10)}`, reportType % 0x10 === 1);
        break;
      case 'IGL':
        r.set('ignition', reportType % 0x10 === 1);
        break;
      case 'HBM':
        r.addAlarm(HARSH_BEHAVIOUR[reportType % 0x10]);
        break;
    }
  }
  for (; i + 2 < v.length; i++) {
    if (i >= 4 && COORDINATE.test(v[i]) && COORDINATE.test(v[i + 1])) {
      r.set('hdop', num(v[i - 4], 'hdop'));
      setLocation(r, v[i], v[i + 1], v[i - 3], v[i - 2], v[i - 1]);
      if (v[i + 2]) r.gpsTime = time14(v[i + 2], 'gps time');
      i += 3;
      break;
    }
  }
  if (!r.location) i = 2;
  for (; i + 3 < v.length; i++) {
    if (MCC.test(v[i]) && MCC.test(v[i + 1]) && LAC.test(v[i + 2]) && CELL.test(v[i + 3])) {
      r.network.addCell(int(v[i]), int(v[i + 1]), hex(v[i + 2]), hex(v[i + 3]));
      break;
    }
  }
  const sent = v[v.length - 2] ?? '';
  if (sent.length === 14) {
    r.deviceTime = time14(sent, 'send time');
    const battery = v[v.length - 3] ?? '';
    if (r.location && /^\d{1,3}$/.test(battery)) r.set('batteryLevel', int(battery));
  }
  r.addAlarm(REPORT_ALARMS[t.type]);
  return r.hasContent ? [r] : [];
}

/**
 * `+ACK:GT<command>,<version>,<imei>,<device name>,[<id>,]<serial hex4>,<send time>,<count>`: the
 * device's acknowledgement of a command, kept as a report (`result`: the header, as Traccar keeps
 * it) and tied back by its command word and serial. The heartbeat `+ACK:GTHBD` is neither.
 */
export function decodeAck(t: TextReport): { reports: Report[]; answer?: CommandResult } {
  const v = t.values;
  if (t.type === 'HBD') return { reports: [] };
  const r = new Report();
  const sent = v[v.length - 2] ?? '';
  if (/^\d{14}$/.test(sent)) r.deviceTime = time14(sent, 'send time');
  r.set('result', v[0]);
  const serial = v.length >= 7 ? v[v.length - 3] : '';
  const answer: CommandResult = { text: t.sentence, command: `GT${t.type}` };
  if (/^[0-9a-fA-F]{4}$/.test(serial)) answer.replySerial = parseInt(serial, 16);
  return { reports: [r], answer };
}
