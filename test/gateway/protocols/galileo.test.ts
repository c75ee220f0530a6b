import test from 'ava';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { crc16Modbus } from '../../../protocols/shared/crc.js';
import {
  createDevice,
  startTestServer,
  testInGatewayModes,
  untilConnected,
  type GatewayMode,
  type Teardown,
  type TestServer,
} from '../../helpers/server.js';
import { TrackerClient } from '../../helpers/tracker-client.js';
import { vectorsDir } from '../../helpers/vectors.js';

const IMEI = '868204001549087';
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0) / 1000;
type T = Teardown;

async function start(t: Teardown, mode: GatewayMode, imei = IMEI): Promise<TestServer> {
  const s = await startTestServer(t, {
    env: { TRACKGATE_GALILEO_PORT: '0', TRACKGATE_COMMAND_WAIT: '120', ...mode.env },
  });
  await createDevice(s, imei, { name: 'truck', alertEmails: [] });
  return s;
}

async function connect(t: T, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.galileo);
  t.teardown(() => c.end());
  return c;
}

/** A packet: header, u16 LE length, tag bytes, CRC-16/MODBUS LE. */
function packet(data: Buffer, header = 0x01): Buffer {
  const head = Buffer.from([header, 0, 0]);
  head.writeUInt16LE(data.length, 1);
  const body = Buffer.concat([head, data]);
  const crc = Buffer.alloc(2);
  crc.writeUInt16LE(crc16Modbus(body), 0);
  return Buffer.concat([body, crc]);
}

/** the acknowledgement: 0x02 (0x07 for a photo) and the packet's last two bytes */
const ackOf = (p: Buffer, header = 0x02): Buffer => Buffer.concat([Buffer.from([header]), p.subarray(-2)]);

const head = (imei = IMEI): Buffer =>
  packet(
    Buffer.concat([
      Buffer.from('01820213', 'hex'),
      Buffer.from([0x03]),
      Buffer.from(imei),
      Buffer.from('043200', 'hex'),
    ]),
  );

/** A main packet without the IMEI: one record per second offset (time, coordinates, speed/course, power). */
function records(seconds: number[]): Buffer {
  const recs = seconds.map((sec) => {
    const r = Buffer.alloc(5 + 10 + 5 + 3);
    let o = r.writeUInt8(0x20, 0);
    o = r.writeUInt32LE(T0 + sec, o);
    o = r.writeUInt8(0x30, o);
    o = r.writeUInt8(0x07, o);
    o = r.writeInt32LE(55751244, o);
    o = r.writeInt32LE(37618423, o);
    o = r.writeUInt8(0x33, o);
    o = r.writeUInt16LE(425, o); // 42.5 km/h
    o = r.writeUInt16LE(900, o); // 90.0°
    o = r.writeUInt8(0x41, o);
    r.writeUInt16LE(24150, o); // 24.15 V
    return r;
  });
  return packet(Buffer.concat(recs));
}

/** A compressed packet (0x08) of one minimal data set `ago` seconds before now, its alarm bit set. */
function compressedAlarm(ago: number): { frame: Buffer; at: Date } {
  const now = Date.now();
  const year = Date.UTC(new Date(now).getUTCFullYear(), 0, 1);
  const seconds = Math.max(0, Math.floor((now - year) / 1000) - ago);
  const lon = Math.round(((37.6 + 180) * 4194304) / 360);
  const lat = Math.round(((55.7 + 90) * 2097152) / 180);
  let v = 0n;
  for (const [value, bits] of [
    [0, 1],
    [seconds, 25],
    [0, 1],
    [lon, 22],
    [lat, 21],
    [1, 1],
  ])
    v = (v << BigInt(bits)) | BigInt(value);
  v <<= 9n;
  const set = Buffer.from(v.toString(16).padStart(20, '0'), 'hex');
  return { frame: packet(Buffer.concat([set, Buffer.from([0])]), 0x08), at: new Date(year + seconds * 1000) };
}

const locations = async (
  s: TestServer,
  imei = IMEI,
): Promise<{ dateTime: string; latitude: number; longitude: number; speed: number; protocol: string }[]> =>
  (
    await s.request('POST', `/api/devices/${imei}/locations`, {
      token: s.adminToken,
      body: { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' },
    })
  ).body.locations;

testInGatewayModes(
  test,
  'gateway.galileo: the head packet names the device; later packets are stored and acked 02 + CRC after the write',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const h = head();
    c.write(h);
    t.deepEqual(await c.read(3), ackOf(h));
    const p = records([0, 1]);
    c.write(p);
    t.deepEqual(await c.read(3), ackOf(p));
    const stored = await locations(s);
    t.deepEqual(
      stored.map((l) => l.dateTime),
      ['2026-03-01T10:00:00.000Z', '2026-03-01T10:00:01.000Z'],
      'stored by the time the ack arrived',
    );
    t.like(stored[0], { latitude: 55.751244, longitude: 37.618423, speed: 42.5, protocol: 'galileo' });
  },
);

testInGatewayModes(test, 'gateway.galileo: the alarm bit of a compressed packet raises an alert', async (t, mode) => {
  const s = await start(t, mode);
  const c = await connect(t, s);
  const h = head();
  c.write(h);
  t.deepEqual(await c.read(3), ackOf(h));
  const { frame, at } = compressedAlarm(3600);
  c.write(frame);
  t.deepEqual(await c.read(3), ackOf(frame));
  const alerts = await s.request('POST', `/api/devices/${IMEI}/alerts`, {
    token: s.adminToken,
    body: { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' },
  });
  t.is(alerts.body.alerts.length, 1, JSON.stringify(alerts.body));
  t.like(alerts.body.alerts[0], { alertName: 'General', dateTime: at.toISOString() });
});

testInGatewayModes(
  test,
  'gateway.galileo: a packet split across writes and two packets in one write are both acknowledged',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const h = head();
    for (let i = 0; i < h.length; i += 5) {
      c.write(h.subarray(i, i + 5));
      await new Promise((r) => setTimeout(r, 2));
    }
    t.deepEqual(await c.read(3), ackOf(h));
    const [a, b] = [records([10]), records([11, 12])];
    c.write(Buffer.concat([a, b]));
    t.deepEqual(await c.read(6), Buffer.concat([ackOf(a), ackOf(b)]));
    t.is((await locations(s)).length, 3);
  },
);

testInGatewayModes(test, 'gateway.galileo: an unknown IMEI gets no answer and nothing is stored', async (t, mode) => {
  const s = await start(t, mode);
  const c = await connect(t, s);
  c.write(head('111111111111111'));
  c.write(records([0]));
  t.true(await c.nothingFor(300));
  t.is((await locations(s)).length, 0);
});

testInGatewayModes(
  test,
  'gateway.galileo: captured packets (head with positions, photo part) are stored and acked as Traccar would',
  async (t, mode) => {
    const imei = '868345032066573';
    const s = await start(t, mode, imei);
    const c = await connect(t, s);
    const [main, photo] = loadCaptured();
    c.write(main);
    t.deepEqual(await c.read(3), Buffer.from('02e007', 'hex'));
    t.is((await locations(s, imei)).length, 5);
    c.write(photo);
    t.deepEqual(await c.read(3), Buffer.from('07d4ba', 'hex'));
  },
);

testInGatewayModes(
  test,
  'gateway.galileo: a text command goes as a tag 03/04/E0/E1 packet and the E1 answer answers it',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const h = head();
    c.write(h);
    t.deepEqual(await c.read(3), ackOf(h));
    await untilConnected(s, IMEI);
    const pending = s.request('POST', `/api/devices/${IMEI}/sendCommand`, {
      token: s.adminToken,
      body: { command: 'status' },
    });
    const top = await c.read(3);
    const rest = await c.read(top.readUInt16LE(1) + 2);
    const sent = Buffer.concat([top, rest]);
    t.is(
      sent.toString('hex'),
      `012000 03${Buffer.from(IMEI).toString('hex')} 040000 e000000000 e106${Buffer.from('status').toString('hex')}`.replace(
        / /g,
        '',
      ) + sent.subarray(-2).toString('hex'),
    );
    t.is(sent.readUInt16LE(sent.length - 2), crc16Modbus(sent, 0, sent.length - 2));
    const text = Buffer.from('Dev50 Sat6 Power:24.1V');
    const answer = packet(
      Buffer.concat([
        Buffer.from([0x03]),
        Buffer.from(IMEI),
        Buffer.from('e000000000e1', 'hex'),
        Buffer.from([text.length]),
        text,
      ]),
    );
    c.write(answer);
    t.deepEqual(await c.read(3), ackOf(answer));
    const r = await pending;
    t.is(r.body.command.status, 'answered', JSON.stringify(r.body));
    t.is(r.body.result, 'Dev50 Sat6 Power:24.1V');
  },
);

/** Two frames of Traccar's decoder test: a head-and-main packet naming its IMEI, and a photo part. */
function loadCaptured(): [Buffer, Buffer] {
  const lines = readFileSync(path.join(vectorsDir(), 'galileo.jsonl'), 'utf8').trim().split('\n');
  const photo = lines.map((l) => JSON.parse(l)).find((v) => v.msg_type === 'photo packet 0x07');
  return [Buffer.from(photo.requires_prior[0].frame, 'hex'), Buffer.from(photo.frame, 'hex')];
}
