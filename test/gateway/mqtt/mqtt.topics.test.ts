import test from 'ava';
import {
  routeDevicePublish,
  narrowDeviceFilter,
  isLiveFilter,
  deviceOfTopic,
} from '../../../gateway/mqtt/mqtt.topics.js';
import { clientIdPrefix, deviceIdsBeginning } from '../../../gateway/mqtt/mqtt.auth.js';

test('mqtt.topics: a device publishes to its own devices/ and owntracks/ topics only', (t) => {
  t.deepEqual(routeDevicePublish('devices/d1/locations', 'd1'), { kind: 'locations' });
  t.deepEqual(routeDevicePublish('devices/d1/alerts', 'd1'), { kind: 'alerts' });
  t.deepEqual(routeDevicePublish('owntracks/d1/phone', 'd1'), { kind: 'owntracks', phone: 'phone' });
  t.deepEqual(routeDevicePublish('owntracks/d1/phone/event', 'd1'), {
    kind: 'owntracks-other',
    phone: 'phone',
    subtopic: 'event',
  });
  for (const topic of [
    'devices/d2/locations',
    'devices/d1/other',
    'devices/d1/locations/x',
    'owntracks/d2/phone',
    'owntracks/d1',
    'owntracks/d1/',
    'live/d1/locations',
    '$SYS/x',
    'd1',
    'devices/d1',
  ]) {
    t.is(routeDevicePublish(topic, 'd1'), null, topic);
  }
});

test("mqtt.topics: a device's wildcard in the user level is narrowed to its own id; other filters are refused", (t) => {
  t.is(narrowDeviceFilter('owntracks/+/+', 'd1'), 'owntracks/d1/+');
  t.is(narrowDeviceFilter('owntracks/+/+/event', 'd1'), 'owntracks/d1/+/event');
  t.is(narrowDeviceFilter('owntracks/#', 'd1'), 'owntracks/d1/#');
  t.is(narrowDeviceFilter('owntracks/d1/phone/cmd', 'd1'), 'owntracks/d1/phone/cmd');
  t.is(narrowDeviceFilter('devices/+/#', 'd1'), 'devices/d1/#');
  for (const filter of ['owntracks/d2/+', 'live/#', '#', '+/+/+', '$SYS/#', 'owntracks', 'devices/d2/locations'])
    t.is(narrowDeviceFilter(filter, 'd1'), null, filter);
});

test('mqtt.topics: API users subscribe to live/ filters only; device topics name their device', (t) => {
  t.true(isLiveFilter('live/#'));
  t.true(isLiveFilter('live/+/locations'));
  t.false(isLiveFilter('live/'));
  t.false(isLiveFilter('#'));
  t.false(isLiveFilter('devices/d1/locations'));
  t.is(deviceOfTopic('owntracks/d1/phone'), 'd1');
  t.is(deviceOfTopic('devices/d1/alerts'), 'd1');
  t.is(deviceOfTopic('live/d1/alerts'), undefined);
});

test("mqtt.auth: a client id starts with the user name, or is OwnTracks' folded default; the prefix length is the claim", (t) => {
  t.is(clientIdPrefix('861234567890123', '861234567890123'), 15);
  t.is(clientIdPrefix('861234567890123-phone', '861234567890123'), 15);
  t.is(clientIdPrefix('abc123phone', 'ABC-123'), 6);
  t.is(clientIdPrefix('mqttjs_1234', 'dev1'), null);
  t.is(clientIdPrefix('dev', 'dev1'), null);
});

test('mqtt.auth: the device ids that could own a client id are its prefixes made of device-id characters', (t) => {
  t.deepEqual(deviceIdsBeginning('dev1-a', 5), ['dev1-', 'dev1-a']);
  t.deepEqual(deviceIdsBeginning('dev1', 5), []);
  // an e-mail user name: no device id holds '@'
  t.deepEqual(deviceIdsBeginning('w@example.com-1', 1), ['w']);
  t.deepEqual(deviceIdsBeginning('w@example.com-1', 2), []);
  // no device id is longer than 64 characters
  t.is(deviceIdsBeginning('x'.repeat(128), 1).length, 64);
});
