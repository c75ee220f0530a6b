import type { CommandResult, DecodedMessage } from '../types.js';
import { NetworkInfo } from '../shared/network.js';
import { ALERT_ALARMS, BLE_MASK, EMERGENCY_ALARMS } from './suntech.constants.js';
import { type Fields, Report, isDate, isDecimal, isTime } from './suntech.fields.js';

/** What a text report is: the device it names, what it reports, a command answer it carries. */
export interface TextOutcome {
  identity?: string;
  messages: DecodedMessage[];
  commandResult?: CommandResult;
}

const nothing = (identity?: string): TextOutcome => ({ ...(identity && { identity }), messages: [] });
const bit = (mask: number, n: number): boolean => Math.floor(mask / 2 ** n) % 2 === 1;

/** `lat;lon;speed km/h;course` */
function position(f: Fields, r: Report): void {
  r.coordinates(f.number('latitude'), f.number('longitude'));
  r.speedKmh = f.number('speed');
  r.course(f.number('course'));
}

/** `sats;fix` */
function fix(f: Fields, r: Report): void {
  r.satellites = f.optionalInt();
  r.set('sat', r.satellites);
  r.valid = f.next() === '1';
}

/**
 * UEX serial data: `<length>;<data>…;<checksum>`. The data runs over as many `;` fields as its
 * length covers: `CabAVL"…,fuel1,fuel2…"` (fuel), `GTSL|…|<driver>|…` (driver), `t_0=1C` / `N_0=0419.0`
 * / `Q_D=0B` (hex temperatures, fuel levels, driving quality); anything else is kept as `serial`.
 */
function serialData(f: Fields, r: Report): void {
  let remaining = f.optionalInt() ?? 0;
  let totalFuel = 0;
  while (remaining > 0 && f.left > 0) {
    const item = f.next();
    remaining -= item.length + 1;
    if (item.startsWith('CabAVL')) {
      const data = item.split(',');
      for (const [i, key] of [
        [2, 'fuel1'],
        [3, 'fuel2'],
      ] as const) {
        const fuel = Number(data[i]);
        if (fuel > 0) {
          totalFuel += fuel;
          r.set(key, fuel);
        }
      }
    } else if (item.startsWith('GTSL')) {
      r.set('driverUniqueId', item.split('|')[4]);
    } else if (/^[A-Za-z]_[0-9A-Za-z]=/.test(item)) {
      const [name, raw] = item.split('=');
      const value = parseInt(raw.trim().split('.')[0], 16);
      if (!Number.isFinite(value)) continue;
      if (name[0] === 't') r.set(`temp${name[2]}`, value);
      else if (name[0] === 'N') {
        totalFuel += value;
        r.set(`fuel${name[2]}`, value);
      } else if (name[0] === 'Q') r.set('drivingQuality', value);
    } else if (item.trim()) {
      r.set('serial', item.trim());
    }
  }
  if (totalFuel > 0) r.set('fuel', totalFuel);
  f.skip(); // checksum
}

/**
 * What firmware adds after the report (Traccar's `suntech.hbm`, `includeAdc`, `includeRpm`,
 * `includeTemp` settings), read from the fields themselves instead of settings:
 * `<hours min>;<battery V>;<0 stored|1 live>`, then analogue inputs (decimals), an RPM (the integer
 * before a driver id), a driver id (14 hex digits) with its `1` valid flag, and temperature probes
 * `<probe id>:<°C>`.
 */
function tail(f: Fields, r: Report): void {
  if (f.left <= 0 || !/^\d+$/.test(f.peek() ?? '')) return;
  r.set('hours', (f.optionalInt() ?? 0) * 60_000);
  if (f.left > 0) {
    const battery = f.next();
    if (isDecimal(battery) || /^\d+$/.test(battery)) r.set('battery', Number(battery));
  }
  if (f.left > 0 && f.next() === '0') r.set('archive', true);
  const rest = f.values.slice(f.index);
  const driverAt = rest.findIndex((v, i) => /^[0-9A-Fa-f]{14}$/.test(v) && /^[01]$/.test(rest[i + 1] ?? ''));
  const before = driverAt < 0 ? rest.filter((v) => !v.includes(':')) : rest.slice(0, driverAt);
  if (driverAt > 0 && /^\d+$/.test(before[before.length - 1])) r.set('rpm', parseInt(before.pop()!, 10));
  if (driverAt >= 0 || before.every((v) => v === '' || isDecimal(v))) {
    before
      .filter(isDecimal)
      .slice(0, 3)
      .forEach((v, i) => r.set(`adc${i + 1}`, Number(v)));
  }
  if (driverAt >= 0 && rest[driverAt + 1] === '1' && !/^0+$/.test(rest[driverAt]))
    r.set('driverUniqueId', rest[driverAt]);
  rest
    .filter((v) => v.includes(':'))
    .slice(0, 3)
    .forEach((v, i) => {
      const value = v.slice(v.indexOf(':') + 1);
      if (isDecimal(value) || /^[+-]?\d+$/.test(value)) r.set(`temp${i + 1}`, Number(value));
    });
}

/**
 * Legacy ST300/ST340/ST500/ST600/SA200 reports (SuntechProtocolDecoder.decode2356):
 * `<model><TYPE>;<id>;[<model no>;]<sw>;<date>;<time>;[<cell hex>;[<mcc>;<mnc>;<lac hex>;<rssi>;]]<lat>;<lon>;<speed>;<course>;<sats>;<fix>;<odometer m>;<power V>;<io>;…`
 */
export function decodeLegacy(f: Fields, model: string, type: string): TextOutcome {
  const identity = f.next();
  if (!['STT', 'EMG', 'EVT', 'ALT', 'UEX'].includes(type)) return nothing(identity);
  const r = new Report(f);
  r.set('type', type);
  if (model.startsWith('ST3') || model === 'ST500' || model === 'ST600') f.skip(); // model number
  r.set('versionFw', f.next());
  r.fixTime = f.dateTime();
  if (model !== 'ST500') {
    const cid = f.optionalHex();
    if (model === 'ST600') {
      const mcc = f.optionalInt();
      const mnc = f.optionalInt();
      const lac = f.optionalHex();
      const rssi = f.optionalInt();
      const net = new NetworkInfo();
      if (cid !== undefined && lac !== undefined) net.addCell(mcc, mnc, lac, cid, rssi);
      net.applyTo(r.attributes);
    }
  }
  position(f, r);
  fix(f, r);
  r.set('odometer', f.optionalInt());
  r.set('power', Number(f.next()));
  const io = f.next();
  if (/^[01]{6,}$/.test(io)) {
    r.set('ignition', io[0] === '1');
    ['in1', 'in2', 'in3', 'out1', 'out2'].forEach((key, i) => r.set(key, io[i + 1] === '1'));
  }
  switch (type) {
    case 'STT':
      r.set('status', f.optionalInt());
      r.set('index', f.optionalInt());
      break;
    case 'EMG':
      r.alarm(EMERGENCY_ALARMS[f.optionalInt() ?? -1]);
      break;
    case 'EVT':
      r.set('event', f.optionalInt());
      break;
    case 'ALT':
      r.alarm(ALERT_ALARMS[f.optionalInt() ?? -1]);
      break;
    default:
      serialData(f, r);
  }
  tail(f, r);
  return { identity, messages: [r.message()] };
}

/**
 * ST4xx reports (SuntechProtocolDecoder.decode4): `ST410STT;<id>;<sw>;<model>;[<n>;]` then 7 cells
 * (`cid;mcc;mnc;rssi;lac;ta` first, `cid;mcc;mnc;lac;rssi;ta` after), `battery;archive;index;status`,
 * fields some firmware adds, then `<date>;<time>;<lat>;<lon>;<speed>;<course>;<sats>;<fix>`.
 */
export function decodeSt4(f: Fields, type: string): TextOutcome {
  const identity = f.next();
  if (type !== 'STT' && type !== 'ALT') return nothing(identity);
  const r = new Report(f);
  r.set('type', type);
  r.set('versionFw', f.next());
  f.skip(); // model
  if ((f.peek() ?? '').length <= 2 && f.left > 43) f.skip(); // ST419: a count before the cells
  const net = new NetworkInfo();
  for (let i = 0; i < 7; i++) {
    const cid = f.optionalInt();
    const mcc = f.optionalInt();
    const mnc = f.optionalInt();
    const [first, second] = [f.optionalInt(), f.optionalInt()];
    const [lac, rssi] = i === 0 ? [second, first] : [first, second];
    f.skip(); // timing advance
    if (cid !== undefined && cid > 0 && lac !== undefined) net.addCell(mcc, mnc, lac, cid, rssi);
  }
  net.applyTo(r.attributes);
  r.set('battery', Number(f.next()));
  if (f.next() === '0') r.set('archive', true);
  r.set('index', f.optionalInt());
  r.set('status', f.optionalInt());
  while (f.left > 1 && !(isDate(f.peek()) && isTime(f.peek(1)))) f.skip(); // collaborative network and the like
  if (f.left > 1) {
    r.fixTime = f.dateTime();
    position(f, r);
    fix(f, r);
  }
  return { identity, messages: [r.message()] };
}

/**
 * ST9xx reports (SuntechProtocolDecoder.decode9): `ST910;Location|Emergency|Alert;<id>;[<sw>;]<date>;<time>;[<cell>;]<lat>;<lon>;<speed>;<course>;<fix>;[<odometer>;]…`.
 * Emergency and Alert are general alarms. The firmware version and cell field (Traccar's
 * `suntech.protocolType`) are told apart by what the fields hold.
 */
export function decodeSt9(f: Fields): TextOutcome {
  const type = f.next();
  if (type !== 'Location' && type !== 'Emergency' && type !== 'Alert') return nothing();
  const identity = f.next();
  const r = new Report(f);
  if (type !== 'Location') r.alarm('general');
  if (!isDate(f.peek())) r.set('versionFw', f.next());
  r.fixTime = f.dateTime();
  const withCell = !isDecimal(f.peek());
  if (withCell) f.skip(); // cell
  position(f, r);
  r.valid = f.next() === '1';
  if (withCell) r.set('odometer', f.optionalInt());
  return { identity, messages: [r.message()] };
}

/**
 * Universal reports (`STT;<id>;<hex mask>;…`, SuntechProtocolDecoder.decodeUniversal): each mask
 * bit says whether its field is there. ALT carries an alert id; UEX serial data; BLE a fixed mask
 * and its tags.
 */
export function decodeUniversal(f: Fields, type: string): TextOutcome {
  const identity = f.next();
  if (!['STT', 'ALT', 'UEX', 'BLE'].includes(type)) return nothing(identity);
  const r = new Report(f);
  r.set('type', type);
  let mask = BLE_MASK;
  if (type !== 'BLE') {
    const m = f.next();
    if (!/^[0-9A-Fa-f]{1,8}$/.test(m)) f.fail(`field mask "${m}" is not hex`);
    mask = parseInt(m, 16);
  }
  const has = (n: number): boolean => bit(mask, n);
  if (has(1)) f.skip(); // model
  if (has(2)) r.set('versionFw', f.next());
  if (has(3) && f.next() === '0') r.set('archive', true);
  if (has(4) && has(5)) r.fixTime = f.dateTime();
  const cid = has(6) ? f.optionalHex() : undefined;
  const mcc = has(7) ? f.optionalInt() : undefined;
  const mnc = has(8) ? f.optionalInt() : undefined;
  const lac = has(9) ? f.optionalHex() : undefined;
  if (cid !== undefined) {
    const net = new NetworkInfo();
    net.addCell(mcc, mnc, lac ?? 0, cid);
    net.applyTo(r.attributes);
  }
  if (has(10)) r.set('rssi', f.optionalInt());
  const lat = has(11) ? f.number('latitude') : undefined;
  const lon = has(12) ? f.number('longitude') : undefined;
  if (lat !== undefined && lon !== undefined) r.coordinates(lat, lon);
  if (type === 'BLE') {
    r.valid = true;
    const count = f.optionalInt() ?? 0;
    for (let i = 1; i <= count && f.left > 0; i++) {
      r.set(`tag${i}Rssi`, f.optionalInt());
      f.skip(2); // rssi min, max
      r.set(`tag${i}Id`, f.next());
      r.set(`tag${i}Samples`, f.optionalInt());
      r.set(`tag${i}Major`, f.optionalInt());
      r.set(`tag${i}Minor`, f.optionalInt());
    }
    return { identity, messages: [r.message()] };
  }
  if (has(13)) r.speedKmh = f.number('speed');
  if (has(14)) r.course(f.number('course'));
  if (has(15)) {
    r.satellites = f.optionalInt();
    r.set('sat', r.satellites);
  }
  if (has(16)) r.valid = f.next() === '1';
  if (has(17)) r.set('input', f.optionalInt());
  if (has(18)) r.set('output', f.optionalInt());
  if (type === 'UEX') {
    serialData(f, r);
    return { identity, messages: [r.message()] };
  }
  if (type === 'ALT') {
    if (has(19)) {
      const alertId = f.next();
      r.set('alertId', alertId);
      r.alarm(ALERT_ALARMS[parseInt(alertId, 10)]);
    }
    if (has(20)) r.set('alertModifier', f.next());
    if (has(21)) r.set('alertData', f.next());
  } else {
    if (has(19)) r.set('mode', f.optionalInt());
    if (has(20)) r.set('reason', f.optionalInt());
    if (has(21)) r.set('index', f.optionalInt());
  }
  if (has(22)) f.skip(); // reserved
  if (has(23)) {
    const assign = parseInt(f.next(), 16);
    for (let i = 0; i <= 30 && Number.isFinite(assign); i++) if (bit(assign, i)) r.set(`io${i + 1}`, f.next());
  }
  return { identity, messages: [r.message()] };
}

/** HTE travel report: the driver id is its last field (SuntechProtocolDecoder.decodeTravelReport) */
export function decodeTravel(f: Fields): TextOutcome {
  const identity = f.next();
  const driver = f.values[f.values.length - 1];
  return { identity, messages: driver ? [{ alarms: [], attributes: { driverUniqueId: driver } }] : [] };
}

/**
 * A command answer: legacy `ST300CMD;Res;<id>;<answer…>` or universal `RES;<id>;<answer…>`. It
 * echoes nothing of the command: it answers the oldest one waiting.
 */
export function decodeAnswer(f: Fields, universal: boolean): TextOutcome {
  if (!universal && f.next() !== 'Res') return nothing();
  const identity = f.next();
  const text = f.values.slice(f.index).join(';');
  return { identity, messages: [{ alarms: [], attributes: { result: text } }], commandResult: { text } };
}
