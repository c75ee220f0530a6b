import test from 'ava';
import { decodeOwnTracks, OWNTRACKS_TRIGGER_ALARMS } from '../../../protocols/owntracks/owntracks.decoder.js';

test("owntracks.decoder: a location becomes a report in the core's units", (t) => {
  const [d] = decodeOwnTracks(
    {
      _type: 'location',
      lat: 52.52,
      lon: 13.4,
      tst: 1772359200,
      acc: 12,
      alt: 34,
      vel: 18,
      cog: 270,
      batt: 64,
      odometer: 1234.5,
      t: 'i',
      vac: 3,
    },
    'phone',
  );
  t.is(d.kind, 'location');
  if (d.kind !== 'location') return;
  t.deepEqual(d.report.fixTime, new Date('2026-03-01T10:00:00Z'));
  t.deepEqual(d.report.location, {
    latitudeDeg: 52.52,
    longitudeDeg: 13.4,
    valid: true,
    speedKmh: 18,
    courseDeg: 270,
    altitudeM: 34,
    accuracyM: 12,
  });
  t.deepEqual(d.report.alarms, []);
  t.like(d.report.attributes, {
    batteryLevel: 64,
    odometer: 1234500,
    ignition: true,
    trigger: 'i',
    verticalAccuracy: 3,
    owntracksDevice: 'phone',
  });
});

test('owntracks.decoder: Queclink trigger codes that are alarms', (t) => {
  t.deepEqual(OWNTRACKS_TRIGGER_ALARMS, {
    '!': 'tow',
    '9': 'lowBattery',
    e: 'powerCut',
    E: 'powerRestored',
    s: 'overspeed',
  });
  const [d] = decodeOwnTracks({ _type: 'location', lat: 1, lon: 2, tst: 1772359200, t: 'E' }, 'car');
  t.deepEqual(d.kind === 'location' ? d.report.alarms : undefined, ['powerRestored']);
  const [p] = decodeOwnTracks({ _type: 'location', lat: 1, lon: 2, tst: 1772359200, t: 'p' }, 'car');
  t.deepEqual(p.kind === 'location' ? p.report.alarms : undefined, []);
});

test('owntracks.decoder: other types are ignored, broken locations are malformed', (t) => {
  t.deepEqual(decodeOwnTracks({ _type: 'lwt' }, 'p'), [{ kind: 'ignored', type: 'lwt' }]);
  t.deepEqual(decodeOwnTracks({ _type: 'card', name: 'x' }, 'p'), [{ kind: 'ignored', type: 'card' }]);
  t.deepEqual(decodeOwnTracks({ _type: 'encrypted', data: 'AAAA' }, 'p'), [{ kind: 'ignored', type: 'encrypted' }]);
  for (const bad of [
    null,
    'x',
    42,
    {},
    { _type: 'location', lat: 91, lon: 0, tst: 1 },
    { _type: 'location', lat: 1, lon: 181, tst: 1 },
    { _type: 'location', lat: 1, lon: 1 },
    { _type: 'location', lat: '1', lon: 1, tst: 1 },
  ]) {
    t.is(decodeOwnTracks(bad, 'p')[0].kind, 'malformed', JSON.stringify(bad));
  }
  // the HTTP mode's array form
  t.deepEqual(
    decodeOwnTracks([{ _type: 'lwt' }, { _type: 'location', lat: 1, lon: 1, tst: 1772359200 }], 'p').map((d) => d.kind),
    ['ignored', 'location'],
  );
});
