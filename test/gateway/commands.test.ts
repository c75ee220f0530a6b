import test from 'ava';
import { ManualClock } from '../../core/clock.js';
import { encodeCodec12 } from '../../protocols/teltonika/teltonika.encoder.js';
import { backends } from '../helpers/backends.js';
import { createDevice, startServer, type TestServer } from '../helpers/server.js';
import { TrackerClient, readTeltonikaCommand, teltonikaSession } from '../helpers/tracker-client.js';
import { until } from '../helpers/wait.js';
import * as F from '../helpers/frames.js';
import { escapeFrame } from '../../protocols/jt808/jt808.frame.js';

const IMEI = '356307042441013';
const ENV = { TRACKGATE_TELTONIKA_PORT: '0', TRACKGATE_COMMAND_WAIT: '120' };
type T = { teardown(fn: () => unknown): void };

async function start(
  t: T,
  backend: 'sqlite' | 'postgres' = 'sqlite',
  options: { env?: Record<string, string>; clock?: ManualClock } = {},
): Promise<TestServer> {
  const s = await startServer(backend, { env: { ...ENV, ...options.env }, clock: options.clock });
  t.teardown(() => s.stop());
  return s;
}

const send = (s: TestServer, body: Record<string, unknown>, id = IMEI) =>
  s.request('POST', `/api/devices/${id}/sendCommand`, { token: s.adminToken, body });
const commands = async (
  s: TestServer,
  id = IMEI,
): Promise<{ id: number; status: string; command: string; result: string | null; attempts: number }[]> =>
  (await s.request('GET', `/api/devices/${id}/commands`, { token: s.adminToken })).body.commands;

for (const backend of await backends()) {
  test(`gateway.commands (${backend}): a connected Teltonika gets the command at once and sendCommand answers with its reply`, async (t) => {
    const s = await start(t, backend);
    await createDevice(s, IMEI);
    const c = await teltonikaSession(t, s.running.ports.teltonika, IMEI);
    const pending = send(s, { command: 'getinfo' });
    t.is(await readTeltonikaCommand(c), 'getinfo');
    c.write(F.teltonikaAnswer('RTC:2026/3/1 10:00 Init:2026/3/1 9:00 UpTime:3600s'));
    const r = await pending;
    t.is(r.status, 200, JSON.stringify(r.body));
    t.is(r.body.result, 'RTC:2026/3/1 10:00 Init:2026/3/1 9:00 UpTime:3600s');
    t.like(r.body.command, {
      status: 'answered',
      attempts: 1,
      result: 'RTC:2026/3/1 10:00 Init:2026/3/1 9:00 UpTime:3600s',
    });
    t.truthy(r.body.command.sent);
    t.truthy(r.body.command.answered);
    t.like((await commands(s))[0], { status: 'answered', result: r.body.result });
  });

  test(`gateway.commands (${backend}): queued while offline, delivered in order one at a time after login, and survives a restart`, async (t) => {
    const first = await startServer(backend, { env: ENV });
    t.teardown(() => first.stop());
    await createDevice(first, IMEI);
    const a = await send(first, { command: 'getver' });
    const b = await send(first, { command: 'setdigout 1', ttl: 3600 });
    t.is(a.body.command.status, 'queued');
    t.regex(a.body.result, /not connected/);
    await first.running.stop();

    const restarted = await startServer(backend, { env: ENV, storageEnv: first.storageEnv });
    t.teardown(() => restarted.stop());
    const c = await teltonikaSession(t, restarted.running.ports.teltonika, IMEI);
    t.is(await readTeltonikaCommand(c), 'getver', 'the oldest first, right after the login reply');
    t.true(await c.nothingFor(300), 'the next waits for the answer to the one in flight');
    c.write(F.teltonikaAnswer('Ver:03.27.07'));
    t.is(await readTeltonikaCommand(c), 'setdigout 1');
    c.write(F.teltonikaAnswer('DOUT1:1 DOUT2:0'));
    await until('both answered', async () => (await commands(restarted)).every((x) => x.status === 'answered'));
    const list = await commands(restarted);
    t.deepEqual(
      list.map((x) => [x.id, x.result]),
      [
        [b.body.command.id, 'DOUT1:1 DOUT2:0'],
        [a.body.command.id, 'Ver:03.27.07'],
      ],
    );
  });
}

test('gateway.commands: no reply within TRACKGATE_COMMAND_WAIT leaves the command sent, says so, and a late reply is still recorded', async (t) => {
  const s = await start(t, 'sqlite', { env: { TRACKGATE_COMMAND_WAIT: '1' } });
  await createDevice(s, IMEI);
  const c = await teltonikaSession(t, s.running.ports.teltonika, IMEI);
  const pending = send(s, { command: 'getgps' });
  t.is(await readTeltonikaCommand(c), 'getgps');
  const r = await pending;
  t.regex(r.body.result, /No reply from the device within 1 s/);
  t.is(r.body.command.status, 'sent');
  c.write(F.teltonikaAnswer('GPS:1 Sat:9'));
  await until('answered late', async () => (await commands(s))[0].status === 'answered');
  t.is((await commands(s))[0].result, 'GPS:1 Sat:9');
});

test('gateway.commands: a device that drops before answering gets the command again on its next connection, at most 3 times, then it has failed', async (t) => {
  const s = await start(t);
  await createDevice(s, IMEI);
  const queued = await send(s, { command: 'cpureset' });
  for (let attempt = 1; attempt <= 3; attempt++) {
    const c = await teltonikaSession(t, s.running.ports.teltonika, IMEI);
    t.is(await readTeltonikaCommand(c), 'cpureset', `delivery ${attempt}`);
    t.like((await commands(s))[0], { status: 'sent', attempts: attempt });
    c.end();
    await c.waitClosed();
    await until('the server saw it go', () => !s.running.gateway.connectedDevices().includes(IMEI));
  }
  const c = await teltonikaSession(t, s.running.ports.teltonika, IMEI);
  await until('failed after its third delivery', async () => (await commands(s))[0].status === 'failed');
  t.true(await c.nothingFor(0), 'not a fourth time');
  const [failed] = await commands(s);
  t.is(failed.id, queued.body.command.id);
  t.is(failed.status, 'failed');
  t.regex(failed.result!, /No answer after 3 deliveries/);
});

test('gateway.commands: a cancelled command is never delivered; an expired one neither', async (t) => {
  const clock = new ManualClock(Date.now());
  const s = await start(t, 'sqlite', { clock });
  await createDevice(s, IMEI);
  const a = await send(s, { command: 'getver' });
  const b = await send(s, { command: 'getinfo', ttl: 60 });
  await send(s, { command: 'getgps', ttl: 600 });
  t.is(
    (await s.request('DELETE', `/api/devices/${IMEI}/commands/${a.body.command.id}`, { token: s.adminToken })).status,
    200,
  );
  clock.advance(61_000);
  const c = await teltonikaSession(t, s.running.ports.teltonika, IMEI);
  t.is(await readTeltonikaCommand(c), 'getgps', 'the cancelled and the expired ones are skipped');
  const list = await commands(s);
  t.deepEqual(
    list.map((x) => x.status),
    ['sent', 'expired', 'cancelled'],
  );
  t.is(list[1].id, b.body.command.id);
});

test('gateway.commands: Hex is written as it is, and its answer is the one in flight', async (t) => {
  const s = await start(t);
  await createDevice(s, IMEI);
  const c = await teltonikaSession(t, s.running.ports.teltonika, IMEI);
  const raw = encodeCodec12(Buffer.from('getio', 'latin1'));
  const pending = send(s, { command: raw.toString('hex').replace(/(..)/g, '$1 ').trim(), format: 'Hex' });
  t.deepEqual(await c.read(raw.length), raw);
  c.write(F.teltonikaAnswer('DI1:0 AIN1:0'));
  const r = await pending;
  t.is(r.body.result, 'DI1:0 AIN1:0');
  t.is(r.body.command.status, 'answered');
});

/** Reads one GT06 0x80 command frame: its server flag and text. */
async function readGt06Command(c: TrackerClient): Promise<{ flag: number; text: string }> {
  const head = await c.read(3);
  const frame = Buffer.concat([head, await c.read(head[2] + 2)]);
  if (frame[3] !== 0x80) throw new Error(`not a 0x80 command: ${frame.toString('hex')}`);
  return { flag: frame.readUInt32BE(5), text: frame.toString('latin1', 9, 9 + frame[4] - 4) };
}

test('gateway.commands: GT06 answers are tied to their command by the echoed server flag, whatever their order', async (t) => {
  const s = await start(t, 'sqlite', { env: { TRACKGATE_GT06_PORT: '0', TRACKGATE_COMMAND_WAIT: '1' } });
  await createDevice(s, IMEI);
  const c = await TrackerClient.connect(s.running.ports.gt06);
  t.teardown(() => c.end());
  c.write(F.gt06Login(IMEI, 1));
  await c.read(10);
  const a = send(s, { command: 'WHERE#' });
  const first = await readGt06Command(c);
  t.is(first.text, 'WHERE#');
  t.is((await a).body.command.status, 'sent', 'no reply within 1 s');
  const b = send(s, { command: 'Relay,1#' });
  const second = await readGt06Command(c);
  t.is(second.text, 'Relay,1#');
  t.not(second.flag, first.flag);
  c.write(F.gt06CommandAnswer(second.flag, 'Cut off the fuel supply: Success!'));
  // b's POST may have stopped waiting (1 s) before the answer came on a busy machine: the list tells
  await b;
  await until('the later command answered', async () => (await commands(s))[0].status === 'answered');
  t.is(
    (await commands(s))[0].result,
    'Cut off the fuel supply: Success!',
    'the later command gets its own answer, not the oldest waiting',
  );
  t.is((await commands(s))[1].status, 'sent', 'the oldest still waits');
  c.write(F.gt06CommandAnswer(first.flag, 'Lat:N40.4168,Lon:W3.7038'));
  await until('the first answered', async () => (await commands(s)).every((x) => x.status === 'answered'));
  t.is((await commands(s))[1].result, 'Lat:N40.4168,Lon:W3.7038');
});

/** Reads one text frame up to and including `end`. */
async function readText(c: TrackerClient, end: string): Promise<string> {
  let text = '';
  while (!text.endsWith(end)) text += (await c.read(1)).toString('latin1');
  return text;
}

test('gateway.commands: an H02 command carries its send time, and the V4 confirmation echoing word and time answers it', async (t) => {
  const s = await start(t, 'sqlite', { env: { TRACKGATE_H02_PORT: '0' } });
  await createDevice(s, IMEI);
  const c = await TrackerClient.connect(s.running.ports.h02);
  t.teardown(() => c.end());
  const queued = await send(s, { command: 'S20,1,1' });
  t.is(queued.body.command.status, 'queued');
  c.write(`*HQ,${IMEI},V1,100000,A,4025.0080,N,00342.2280,W,000.00,000,010326,FFFFFBFF#`);
  t.regex(await readText(c, '#'), /^\*HQ,\d+,V4,V1,\d{14}#$/, "the position's acknowledgement first");
  const frame = await readText(c, '#');
  const m = /^\*HQ,(\d+),S20,(\d{6}),1,1#$/.exec(frame);
  t.truthy(m, frame);
  t.is(m![1], IMEI);
  // a V4 with another time answers another command: not this one
  c.write(`*HQ,${IMEI},V4,S20,DONE,${m![2] === '000000' ? '000001' : '000000'}#`);
  await until(
    'the answer to no command kept in the device log',
    async () => (await s.request('GET', `/api/devices/${IMEI}/log`, { token: s.adminToken })).body.log.length === 1,
  );
  t.is((await commands(s))[0].status, 'sent');
  c.write(`*HQ,${IMEI},V4,S20,DONE,${m![2]}#`);
  await until('answered', async () => (await commands(s))[0].status === 'answered');
  t.is((await commands(s))[0].result, `S20,DONE,${m![2]}`);
});

/** A JT808 frame from the terminal: header (id, body length, BCD terminal id, serial), body, XOR, escaped (JT/T 808-2013 4). */
function jt808Frame(terminalId: string, id: number, serial: number, body: Buffer): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(body.length, 2);
  Buffer.from(terminalId.padStart(12, '0'), 'hex').copy(header, 4);
  header.writeUInt16BE(serial, 10);
  const content = Buffer.concat([header, body]);
  let xor = 0;
  for (const b of content) xor ^= b;
  return escapeFrame(Buffer.concat([Buffer.from([0x7e]), content, Buffer.from([xor, 0x7e])]));
}

/** Reads one JT808 frame from the platform and unescapes it: message id, serial and body. */
async function readJt808(c: TrackerClient): Promise<{ id: number; serial: number; body: Buffer }> {
  const bytes: number[] = [...(await c.read(1))];
  do bytes.push((await c.read(1))[0]);
  while (bytes[bytes.length - 1] !== 0x7e);
  const raw: number[] = [];
  for (let i = 1; i < bytes.length - 1; i++)
    raw.push(bytes[i] === 0x7d ? (bytes[++i] === 0x02 ? 0x7e : 0x7d) : bytes[i]);
  const f = Buffer.from(raw);
  return { id: f.readUInt16BE(0), serial: f.readUInt16BE(10), body: f.subarray(12, 12 + (f.readUInt16BE(2) & 0x3ff)) };
}

test('gateway.jt808: a text command goes as 0x8300 and the 0x0001 general response with its serial answers it', async (t) => {
  const terminal = '13912345678';
  const s = await start(t, 'sqlite', { env: { TRACKGATE_JT808_PORT: '0' } });
  await createDevice(s, terminal);
  const c = await TrackerClient.connect(s.running.ports.jt808);
  t.teardown(() => c.end());
  c.write(F.jt808Location(terminal, { time: new Date(Date.UTC(2026, 2, 1, 10)), lat: 40.4, lon: -3.7 }, 5));
  t.is((await readJt808(c)).id, 0x8001, 'the position is acknowledged first');
  const pending = send(s, { command: 'WHERE' }, terminal);
  const cmd = await readJt808(c);
  t.is(cmd.id, 0x8300);
  t.true(cmd.body.includes(Buffer.from('WHERE')));
  // reply serial, reply message id 0x8300, result (0 ok, 1 failed)
  const response = (serial: number, result: number) => Buffer.from([serial >> 8, serial & 0xff, 0x83, 0x00, result]);
  c.write(jt808Frame(terminal, 0x0001, 6, response((cmd.serial + 1) & 0xffff, 1)));
  c.write(jt808Frame(terminal, 0x0001, 7, response(cmd.serial, 0)));
  const r = await pending;
  t.is(
    r.body.command.status,
    'answered',
    'the response naming another serial answers nothing; the one naming its serial answers it',
  );
  t.is(r.body.result, 'ok');
});

test('gateway.commands: a Text queued before the protocol was known, which the protocol cannot carry, fails with the reason and the next one goes', async (t) => {
  const s = await start(t);
  await createDevice(s, IMEI);
  const long = await send(s, { command: 'x'.repeat(200) });
  t.is(long.body.command.status, 'queued', 'unchecked: the device never connected');
  await send(s, { command: 'getver' });
  const c = await teltonikaSession(t, s.running.ports.teltonika, IMEI);
  t.is(await readTeltonikaCommand(c), 'getver');
  const [, failed] = await commands(s);
  t.is(failed.status, 'failed');
  t.regex(failed.result!, /TOO_LONG/);
  t.is(failed.attempts, 0, 'never written');
});

test('gateway.commands: two commands sent at once to a connected device go one after the other, each POST with its own answer', async (t) => {
  const s = await start(t);
  await createDevice(s, IMEI);
  const c = await teltonikaSession(t, s.running.ports.teltonika, IMEI);
  const first = send(s, { command: 'getver' });
  const second = send(s, { command: 'getinfo' });
  const a = await readTeltonikaCommand(c);
  t.true(await c.nothingFor(200), 'one in flight');
  c.write(F.teltonikaAnswer(`reply to ${a}`));
  const b = await readTeltonikaCommand(c);
  t.deepEqual([a, b].sort(), ['getinfo', 'getver']);
  c.write(F.teltonikaAnswer(`reply to ${b}`));
  const [r1, r2] = await Promise.all([first, second]);
  t.is(r1.body.result, 'reply to getver');
  t.is(r2.body.result, 'reply to getinfo');
});

test('gateway.commands: a reply that matches no command is kept in the device log (GET /api/devices/{id}/log), newest first; another account cannot read it', async (t) => {
  const s = await start(t, 'sqlite', { env: { TRACKGATE_GT06_PORT: '0' } });
  await createDevice(s, IMEI);
  const c = await TrackerClient.connect(s.running.ports.gt06);
  t.teardown(() => c.end());
  c.write(F.gt06Login(IMEI, 1));
  await c.read(10);
  const log = async () => (await s.request('GET', `/api/devices/${IMEI}/log`, { token: s.adminToken })).body;
  t.deepEqual((await log()).log, [], 'empty at first');
  // a reply with a server flag no command carries (sent before a restart, or by another system)
  c.write(F.gt06CommandAnswer(0x7777, 'Relay status: on'));
  await c.read(10); // the frame's acknowledgement
  await until('the stray reply logged', async () => (await log()).log.length === 1);
  const sent = send(s, { command: 'WHERE#' });
  const cmd = await readGt06Command(c);
  c.write(F.gt06CommandAnswer(0x1234_5678 === cmd.flag ? 1 : 0x1234_5678, 'Late: nothing asked'));
  await c.read(10);
  await until('the second stray reply logged', async () => (await log()).log.length === 2);
  c.write(F.gt06CommandAnswer(cmd.flag, 'Lat:N40.4168'));
  t.is((await sent).body.result, 'Lat:N40.4168', 'the command is still answered by its own reply');
  const body = await log();
  t.is(body.success, true);
  t.like(body.log[0], { type: 'unsolicitedReply', protocol: 'gt06', text: 'Late: nothing asked' });
  t.like(body.log[1], { type: 'unsolicitedReply', protocol: 'gt06', text: 'Relay status: on' });
  t.truthy(Date.parse(body.log[0].dateTime));
  t.true(body.log[0].id > body.log[1].id);
  t.is((await commands(s)).length, 1, 'no command was made of them');

  const foreign = await s.running.services.accounts.create({
    name: 'Other',
    licenses: 5,
    adminUser: 'other-admin',
    adminApiKey: 'other-admin-key-0123456789',
  });
  const token = (
    await s.request('POST', '/api/Auth/Token', { body: { userName: 'other-admin', apiKey: foreign.apiKey } })
  ).body.token;
  t.is((await s.request('GET', `/api/devices/${IMEI}/log`, { token })).status, 404);
});
