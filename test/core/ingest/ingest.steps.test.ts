/**
 * INGEST_STEPS on tracker reports, directly: what a decoder's attributes become (NUL characters
 * taken out, values JSON cannot hold left out, the size bound) and the exact stored shape of a
 * tracker location (key order included: it is the JSON text stored and answered).
 */
import test from 'ava';
import { runSteps } from '../../../core/ingest/ingest.steps.js';
import { MAX_ATTRIBUTES_JSON } from '../../../core/ingest/json.limits.js';
import type { Report } from '../../../core/model/report.js';

const RECEIVED = new Date(Date.UTC(2026, 2, 1, 12, 0, 0));
const FIX = new Date(Date.UTC(2026, 2, 1, 11, 59, 0));

const report = (attributes: Record<string, unknown>, extra: Partial<Report> = {}): Report => ({
  fixTime: FIX,
  location: { latitudeDeg: 40.5, longitudeDeg: -3.25, valid: true },
  alarms: [],
  attributes: attributes as Report['attributes'],
  ...extra,
});

const attributesOf = (attributes: Record<string, unknown>): Record<string, unknown> | undefined =>
  runSteps(report(attributes), 'test', RECEIVED).location?.attributes;

test('ingest.steps: plain attributes are stored as decoded, the very object (nothing copied)', (t) => {
  const a = { priority: 0, sat: 9, event: 0, ignition: true, power: 12.5, note: 'ok', io999: 'x'.repeat(100) };
  const d = runSteps(report(a), 'test', RECEIVED);
  t.is(d.location!.attributes, a);
  t.deepEqual(d.location!.attributes, {
    priority: 0,
    sat: 9,
    event: 0,
    ignition: true,
    power: 12.5,
    note: 'ok',
    io999: 'x'.repeat(100),
  });
});

test('ingest.steps: NUL characters are taken out of attribute keys and values', (t) => {
  t.deepEqual(attributesOf({ 'a\u0000b': 'c\u0000d\u0000', plain: 1 }), { ab: 'cd', plain: 1 });
});

test('ingest.steps: attribute values JSON cannot hold (NaN, Infinity, objects, null) are left out', (t) => {
  t.deepEqual(attributesOf({ a: NaN, b: Infinity, c: -Infinity, d: { x: 1 }, e: null, f: [1], g: 2, h: false }), {
    g: 2,
    h: false,
  });
});

test('ingest.steps: past MAX_ATTRIBUTES_JSON characters of JSON, the remaining attributes are left out', (t) => {
  // each entry counts key + 4 + value as JSON (strings with their quotes): 'kNN' + 4 + 1,000 + 2 = 1,009
  const a: Record<string, string | number> = {};
  for (let i = 10; i < 40; i++) a[`k${i}`] = String(i % 10).repeat(1000);
  const kept = attributesOf(a)!;
  const fits = Math.floor((MAX_ATTRIBUTES_JSON - 2) / 1009);
  t.is(Object.keys(kept).length, fits);
  t.deepEqual(Object.keys(kept), Object.keys(a).slice(0, fits));
  t.true(JSON.stringify(kept).length <= MAX_ATTRIBUTES_JSON);
});

test('ingest.steps: numbers count with their exact JSON length near the bound (no attribute is lost to an estimate)', (t) => {
  // 'big' + 4 + its string length, plus a filler that leaves exactly enough room for it
  const value = -1.2345678901234566e-7;
  const need = 'big'.length + 4 + String(value).length;
  const filler = 'f'.repeat(MAX_ATTRIBUTES_JSON - 2 - need - ('s'.length + 4 + 2));
  t.deepEqual(Object.keys(attributesOf({ s: filler, big: value })!), ['s', 'big'], 'exactly at the bound: kept');
  t.deepEqual(Object.keys(attributesOf({ s: `${filler}f`, big: value })!), ['s'], 'one character more: left out');
  const many: Record<string, number> = {};
  for (let i = 0; i < 1000; i++) many[`n${i}`] = i;
  t.is(
    Object.keys(attributesOf(many)!).length,
    1000,
    'a thousand small numbers fit (an estimate of 25 characters each would not)',
  );
});

test('ingest.steps: a tracker location has this exact stored shape, in this key order', (t) => {
  const d = runSteps(
    report(
      { sat: 7, batteryLevel: 80, fuel1: 12, temp1: 21.5, rpm: 900, odometer: 123_456, ignition: false, io1: 'x' },
      {
        location: {
          latitudeDeg: 40.5,
          longitudeDeg: -3.25,
          valid: true,
          speedKmh: 50,
          courseDeg: 90,
          altitudeM: 650,
          accuracyM: 5,
        },
        alarms: ['sos', 'overspeed'],
      },
    ),
    'teltonika',
    RECEIVED,
  );
  t.is(
    JSON.stringify(d.location),
    '{"dateTime":"2026-03-01T11:59:00.000Z","latitude":40.5,"longitude":-3.25,"speed":50,"course":90,"altitude":650,"accuracy":5,' +
      '"satellites":7,"valid":true,"battery":80,"fuel":12,"temperature":21.5,"rpm":900,"milleage":123.456,"alerts":["SOSButton","SpeedLimit"],' +
      '"hasCriticalAlert":true,"attributes":{"sat":7,"batteryLevel":80,"fuel1":12,"temp1":21.5,"rpm":900,"odometer":123456,"ignition":false,"io1":"x"},' +
      '"inputs":[false],"serverTime":"2026-03-01T12:00:00.000Z","protocol":"teltonika"}',
  );
  const bare = runSteps(report({}), 'gt06', RECEIVED);
  t.is(
    JSON.stringify(bare.location),
    '{"dateTime":"2026-03-01T11:59:00.000Z","latitude":40.5,"longitude":-3.25,"valid":true,"alerts":[],"hasCriticalAlert":false,"attributes":{},"serverTime":"2026-03-01T12:00:00.000Z","protocol":"gt06"}',
  );
});
