/** The console's MQTT reader (console/mqtt-feed.js): topic filters, and packets split or joined by WebSocket messages. */
import test from 'ava';
// @ts-expect-error: a browser module in plain JavaScript, without types
import { LiveFeed, matches } from '../../console/mqtt-feed.js';

test('mqtt-feed: filters match as MQTT says (+ one level, # the rest)', (t) => {
  t.true(matches('live/+/locations', 'live/356307042441013/locations'));
  t.false(matches('live/+/locations', 'live/356307042441013/alerts'));
  t.false(matches('live/+/locations', 'live/a/b/locations'));
  t.true(matches('live/#', 'live/a/frames'));
  t.true(matches('live/a/frames', 'live/a/frames'));
  t.false(matches('live/a/frames', 'live/a'));
  t.false(matches('live/a', 'live/a/frames'));
});

/** A PUBLISH of `message` on `topic` at `qos` (packet id 7 when qos > 0). */
function publish(topic: string, message: object, qos = 0): Buffer {
  const t = Buffer.from(topic);
  const body = Buffer.concat([
    Buffer.from([t.length >> 8, t.length & 255]),
    t,
    qos ? Buffer.from([0, 7]) : Buffer.alloc(0),
    Buffer.from(JSON.stringify(message)),
  ]);
  const length: number[] = [];
  let n = body.length;
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n) b |= 128;
    length.push(b);
  } while (n);
  return Buffer.concat([Buffer.from([0x30 | (qos << 1), ...length]), body]);
}

/** A feed that is not connected: what it hands its subscribers, and what it writes back. */
function detached() {
  const feed = Object.create(LiveFeed.prototype) as any;
  feed.subs = new Map();
  feed.buffer = new Uint8Array(0);
  const written: number[][] = [];
  feed.send = (bytes: Uint8Array) => written.push([...bytes]);
  const got: [string, unknown][] = [];
  feed.subs.set('live/#', new Set([(topic: string, m: unknown) => got.push([topic, m])]));
  return { feed, got, written };
}

test('mqtt-feed: a packet split over several messages, two in one, a long one (two length bytes)', (t) => {
  const { feed, got } = detached();
  const a = publish('live/1/locations', { latitude: 40.4 });
  const b = publish('live/2/alerts', { alertName: 'SOS' });
  const long = publish('live/3/frames', { hex: 'ab'.repeat(300) });
  t.true((long[1] & 128) !== 0, 'the long packet needs two bytes of length');
  const all = Buffer.concat([a, b, long]);
  // every split point: one byte, then the rest in two pieces
  for (const cut of [1, 2, a.length - 1, a.length + 1, a.length + b.length + 2]) {
    got.length = 0;
    feed.received(new Uint8Array(all.subarray(0, cut)));
    feed.received(new Uint8Array(all.subarray(cut, cut + 5)));
    feed.received(new Uint8Array(all.subarray(cut + 5)));
    t.deepEqual(
      got.map(([topic]) => topic),
      ['live/1/locations', 'live/2/alerts', 'live/3/frames'],
      `cut at ${cut}`,
    );
    t.is(feed.buffer.length, 0);
  }
  t.deepEqual(got[1][1], { alertName: 'SOS' });
});

test('mqtt-feed: a QoS 1 message is acknowledged with its packet id; a message not JSON is skipped', (t) => {
  const { feed, got, written } = detached();
  feed.received(new Uint8Array(publish('live/1/locations', { ok: true }, 1)));
  t.deepEqual(written, [[0x40, 2, 0, 7]]);
  const bad = publish('live/1/locations', {});
  bad[bad.length - 1] = 0x7b; // '{{': not JSON
  feed.received(new Uint8Array(bad));
  t.deepEqual(
    got.map(([, m]) => m),
    [{ ok: true }],
  );
});
