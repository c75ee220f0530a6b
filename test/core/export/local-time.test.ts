import test from 'ava';
import { DateTime } from 'luxon';
import { localTimeWriter } from '../../../core/export/local-time.js';

/** luxon's ISO text, with `+00:00` where it writes `Z` (the UTC zone): the export always names the offset. */
const luxon = (ms: number, zone: string): string =>
  (DateTime.fromMillis(ms, { zone }).toISO({ suppressMilliseconds: true }) as string).replace(/Z$/, '+00:00');

test('export.local-time: every minute around the year’s offset changes agrees with luxon, in zones of whole, half and quarter hours', (t) => {
  for (const zone of ['Europe/Madrid', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'UTC']) {
    const write = localTimeWriter(zone);
    // a week around each of 2026's changes in the northern and southern hemispheres, every 7 minutes and 13 s
    for (const start of [
      '2026-03-05T00:00:00Z',
      '2026-03-26T00:00:00Z',
      '2026-04-02T00:00:00Z',
      '2026-10-01T00:00:00Z',
      '2026-10-22T00:00:00Z',
      '2026-10-29T00:00:00Z',
    ]) {
      const from = Date.parse(start);
      for (let ms = from; ms < from + 7 * 86_400_000; ms += 433_000) {
        const got = write(ms);
        if (got !== luxon(ms, zone)) {
          t.fail(`${zone} ${new Date(ms).toISOString()}: ${got}, luxon ${luxon(ms, zone)}`);
          return;
        }
      }
    }
  }
  t.pass();
});

test('export.local-time: milliseconds only when there are some; an unknown zone is UTC', (t) => {
  const write = localTimeWriter('Europe/Madrid');
  t.is(write(Date.parse('2026-03-29T00:59:59.250Z')), '2026-03-29T01:59:59.250+01:00');
  t.is(write(Date.parse('2026-03-29T01:00:00Z')), '2026-03-29T03:00:00+02:00');
  t.is(localTimeWriter('Mars/Olympus')(Date.parse('2026-03-29T01:00:00Z')), '2026-03-29T01:00:00+00:00');
});
