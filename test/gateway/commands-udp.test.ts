import test from 'ava';
import dgram from 'node:dgram';
import { createDevice, startTestServer, type Teardown, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';
import * as F from '../helpers/frames.js';

const IMEI = '356307042441013';
const ENV = { TRACKGATE_TELTONIKA_PORT: '0', TRACKGATE_COMMAND_WAIT: '120' };
const fix = { time: new Date('2026-03-01T10:00:00Z'), lat: 40.5, lon: -3.5 };

/** A Teltonika tracker on a real UDP socket: every datagram it receives, in order. */
async function udpDevice(t: { teardown(fn: () => unknown): void }, s: TestServer) {
  const sock = dgram.createSocket('udp4');
  t.teardown(() => sock.close());
  const received: Buffer[] = [];
  sock.on('message', (m) => received.push(m));
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  const port = s.running.ports['teltonika/udp'];
  return {
    received,
    send: (b: Buffer) => sock.send(b, port, '127.0.0.1'),
    /** the next datagram after `index` that is a Codec 12 command: its text */
    async command(from: number): Promise<string> {
      let found: Buffer | undefined;
      await until(
        'a Codec 12 command datagram',
        () =>
          (found = received.slice(from).find((m) => m.length > 15 && m[8] === 0x0c && m[10] === 0x05)) !== undefined,
      );
      return found!.toString('latin1', 15, 15 + found!.readUInt32BE(11));
    },
  };
}

/** The device's Codec 12 answer (type 0x06) in the UDP channel header, as it sends records. */
const answerDatagram = (text: string, avlPacketId: number): Buffer =>
  F.teltonikaUdp(IMEI, avlPacketId, F.teltonikaAnswerData(text));

async function start(t: Teardown): Promise<TestServer> {
  const s = await startTestServer(t, { env: ENV });
  await createDevice(s, IMEI);
  return s;
}

const send = (s: TestServer, body: Record<string, unknown>) =>
  s.request('POST', `/api/devices/${IMEI}/sendCommand`, { token: s.adminToken, body });
const listed = async (s: TestServer) =>
  (await s.request('GET', `/api/devices/${IMEI}/commands`, { token: s.adminToken })).body.commands as {
    status: string;
    result: string | null;
  }[];

test('gateway.udp commands: a command queued for a Teltonika heard over UDP goes right after its next datagram, to its address, and its answer datagram answers it', async (t) => {
  const s = await start(t);
  const queued = await send(s, { command: 'getinfo' });
  t.is(queued.body.command.status, 'queued');
  const d = await udpDevice(t, s);
  d.send(F.teltonikaDatagram(IMEI, 7, [fix]));
  t.is(await d.command(0), 'getinfo');
  t.deepEqual(d.received[0], Buffer.from('00050000010701', 'hex'), 'the datagram is acknowledged before the command');
  d.send(answerDatagram('RTC:2026/3/1 10:00 UpTime:3600s', 8));
  await until('the command answered', async () => (await listed(s))[0].status === 'answered');
  t.is((await listed(s))[0].result, 'RTC:2026/3/1 10:00 UpTime:3600s');
});

test('gateway.udp commands: a command sent just after a Teltonika datagram goes at once, and sendCommand answers with the reply datagram', async (t) => {
  const s = await start(t);
  const d = await udpDevice(t, s);
  d.send(F.teltonikaDatagram(IMEI, 7, [fix]));
  await until('the datagram acknowledged', () => d.received.length === 1);
  const pending = send(s, { command: 'getver' });
  t.is(await d.command(1), 'getver');
  d.send(answerDatagram('Ver:03.27.07', 9));
  const r = await pending;
  t.is(r.status, 200, JSON.stringify(r.body));
  t.is(r.body.result, 'Ver:03.27.07');
  t.like(r.body.command, { status: 'answered', attempts: 1 });
});
