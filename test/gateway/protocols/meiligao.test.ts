import test from 'ava';
import dgram from 'node:dgram';
import { meiligaoFrame } from '../../../protocols/meiligao/meiligao.encoder.js';
import { crc16CcittFalse } from '../../../protocols/shared/crc.js';
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
import { until } from '../../helpers/wait.js';

// the frames carry 14 digits; the device is registered as the IMEI they begin (Luhn digit 8)
const IMEI = '490154203237518';
const ID = Buffer.from('49015420323751', 'hex');

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  const s = await startTestServer(t, {
    env: { TRACKGATE_MEILIGAO_PORT: '0', TRACKGATE_COMMAND_WAIT: '1', ...mode.env },
  });
  await createDevice(s, IMEI, { alertEmails: [] });
  return s;
}

async function connect(t: Teardown, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.meiligao);
  t.teardown(() => c.end());
  return c;
}

/** A device frame `$$ | length | id | command | data | CRC | CR LF`. */
function frame(command: number, data: Buffer | string): Buffer {
  const f = meiligaoFrame(ID, command, Buffer.from(data));
  f.write('$$', 0, 'latin1');
  f.writeUInt16BE(crc16CcittFalse(f, 0, f.length - 4), f.length - 4);
  return f;
}
/** a 0x9955 position sentence at 2026-03-01 `hhmmss` UTC: 40°25.008' N, 3°42.228' W, 22.68 kn, 90° */
const sentence = (hhmmss: string): string =>
  `${hhmmss}.000,A,4025.0080,N,00342.2280,W,22.68,90.00,010326,,,A*70|0.9|650.0|0000|0000,0000|0000000000000000|14|00000000`;
const login = frame(0x5000, '');
const LOGIN_ACK = meiligaoFrame(ID, 0x4000, Buffer.from([1]));

const stored = async (
  s: TestServer,
): Promise<{ dateTime: string; latitude: number; longitude: number; speed: number; protocol: string }[]> =>
  (
    await s.request('POST', `/api/devices/${IMEI}/locations`, {
      token: s.adminToken,
      body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    })
  ).body.locations;

testInGatewayModes(
  test,
  'gateway.meiligao: a login is answered 0x4000 01, positions are stored, an SOS alarm raises an alert',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(login);
    t.is((await c.read(LOGIN_ACK.length)).toString('hex'), LOGIN_ACK.toString('hex'));
    c.write(frame(0x9955, sentence('100000')));
    c.write(frame(0x9999, Buffer.concat([Buffer.from([0x01]), Buffer.from(sentence('100005'))])));
    await until('stored', async () => (await stored(s)).length === 2);
    const first = (await stored(s))[0];
    t.like(first, { dateTime: '2026-03-01T10:00:00.000Z', latitude: 40.4168, protocol: 'meiligao' });
    t.true(Math.abs(first.longitude + 3.7038) < 1e-6);
    t.true(Math.abs(first.speed - 22.68 * 1.852) < 0.01);
    const alerts = await s.request('POST', `/api/devices/${IMEI}/alerts`, {
      token: s.adminToken,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    });
    t.is(alerts.body.alerts.length, 1);
    t.like(alerts.body.alerts[0], { alertName: 'SOSButton', dateTime: '2026-03-01T10:00:05.000Z' });
    t.true(await c.nothingFor(200), 'positions and alarms get no answer');
  },
);

testInGatewayModes(
  test,
  'gateway.meiligao: a frame split across writes and two frames in one write are stored; heartbeats answered',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const one = frame(0x9955, sentence('100010'));
    for (let i = 0; i < one.length; i += 9) {
      c.write(one.subarray(i, i + 9));
      await new Promise((r) => setTimeout(r, 2));
    }
    c.write(Buffer.concat([Buffer.from('\r\n'), frame(0x9955, sentence('100011')), frame(0x9955, sentence('100012'))]));
    await until('three stored', async () => (await stored(s)).length === 3);
    t.deepEqual(
      (await stored(s)).map((l) => l.dateTime),
      ['2026-03-01T10:00:10.000Z', '2026-03-01T10:00:11.000Z', '2026-03-01T10:00:12.000Z'],
    );
    c.write(frame(0x0001, ''));
    const ack = meiligaoFrame(ID, 0x0001, Buffer.from([1]));
    t.is((await c.read(ack.length)).toString('hex'), ack.toString('hex'));
  },
);

testInGatewayModes(
  test,
  'gateway.meiligao: a UDP login is answered to its sender and a UDP position stored',
  async (t, mode) => {
    const s = await start(t, mode);
    const sock = dgram.createSocket('udp4');
    t.teardown(() => sock.close());
    const reply = new Promise<Buffer>((r) => sock.once('message', (m) => r(m)));
    const port = s.running.ports['meiligao/udp'];
    sock.send(login, port, '127.0.0.1');
    t.is((await reply).toString('hex'), LOGIN_ACK.toString('hex'));
    sock.send(frame(0x9955, sentence('100020')), port, '127.0.0.1');
    await until('stored', async () => (await stored(s)).length === 1);
    t.is((await stored(s))[0].dateTime, '2026-03-01T10:00:20.000Z');
  },
);

testInGatewayModes(test, 'gateway.meiligao: a Text command is written as an "@@" frame', async (t, mode) => {
  const s = await start(t, mode);
  const c = await connect(t, s);
  c.write(login);
  await c.read(LOGIN_ACK.length);
  await untilConnected(s, IMEI);
  const pending = s.request('POST', `/api/devices/${IMEI}/sendCommand`, {
    token: s.adminToken,
    body: { command: '4102#000a' },
  });
  // the command frame carries the first 14 digits of the device id
  const expected = meiligaoFrame(Buffer.from('49015420323751', 'hex'), 0x4102, Buffer.from('000a', 'hex'));
  t.is((await c.read(expected.length)).toString('hex'), expected.toString('hex'));
  const r = await pending;
  t.is(r.body.command.status, 'sent', JSON.stringify(r.body));
});
