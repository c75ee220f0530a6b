/**
 * Alerts through the whole path (BENCHMARKS.md "alerts"): `POST /api/devices/{id}/alerts` on a real
 * trackgate, each alert stored, counted against the daily e-mail limit, put in the outbox and
 * delivered to an SMTP server in this process. Three devices isolate the cost of the limit check:
 * no e-mail (`none`), limit reached (`reached`), limit never reached (`huge`). Run embedded and
 * with Redis counters. E-mail baselines: the same e-mail sent straight through trackgate's SMTP
 * notifier, and through nodemailer.
 */
import { SMTPServer } from 'smtp-server';
import { Redis } from 'ioredis';
import { openDb } from '../core/db/db.js';
import { startChild, type Child } from './lib/child.js';
import { compareCost, costTable, figure, treeCpuMs, usPer, type Cost } from './lib/cost.js';
import type { HttpLoadResult } from './lib/alerts-http-generator.js';
import type { MailerResult } from './lib/alerts-mailer.js';
import { adminToken, startServerProcess, tempDir, type ServerProcess } from './lib/trackgate.js';
import { QUICK, fmt, log, machine, pct, printTable, type Machine } from './lib/report.js';

const CONNECTIONS = 50;
/** alerts per measured run, after WARMUP alerts on each device (few on `huge`: their e-mails take long) */
const ALERTS = QUICK ? 600 : 2_000;
const WARMUP: Record<'none' | 'reached' | 'huge', number> = QUICK
  ? { none: 300, reached: 300, huge: 100 }
  : { none: 1_000, reached: 1_000, huge: 300 };
/** the longest wait for the e-mails after the last alert was answered */
const MAIL_WAIT_MS = 90_000;
const MAIL_BASELINE = { notifier: QUICK ? 300 : 600, noDelay: QUICK ? 1_000 : 2_000 };
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

type Scenario = 'none' | 'reached' | 'huge';
const DEVICES: Record<Scenario, { id: string; body: Record<string, unknown>; label: string }> = {
  none: { id: 'bench-alerts-none', body: {}, label: 'no alertEmails (store only: baseline)' },
  reached: {
    id: 'bench-alerts-reached',
    body: { alertEmails: ['reached@bench.test'], dailyEmailLimit: 0 },
    label: 'limit 0 (reached: every e-mail suppressed)',
  },
  huge: {
    id: 'bench-alerts-huge',
    body: { alertEmails: ['huge@bench.test'], dailyEmailLimit: 1_000_000 },
    label: 'limit 1,000,000 (never reached: e-mail sent)',
  },
};

export interface ScenarioResult {
  scenario: Scenario;
  label: string;
  /** alerts of the measured runs (store only: two runs, first and last) */
  alerts: number;
  alertsPerSec: number;
  runsPerSec: number[];
  /** of the last run */
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** CPU during the raise phase, % of one core (the server and all its processes) */
  serverCpuPct: number;
  /** µs of CPU of trackgate's processes per alert answered, each run's raise phase (store only: first and last run) */
  cpuUsPerAlert: number[];
  /** huge only: the same from the first request to the last e-mail received (the whole path, delivery included) */
  cpuUsPerAlertToLastEmail?: number;
  generatorCpuPct: number;
  /** alerts/s relative to the `none` device (store only) */
  ratioToStoreOnly: number;
  /** huge only: e-mails of this scenario received, and the rate from the first request to the last e-mail */
  emailsReceived?: number;
  emailsPerSec?: number;
  /** seconds from the last alert answered to the last e-mail received */
  mailTailSeconds?: number;
  allEmailsReceived?: boolean;
}

export interface ModeResult {
  mode: 'embedded' | 'redis';
  scenarios: ScenarioResult[];
  /** after the run, from the database and the counter store */
  check: {
    storedAlerts: Record<Scenario, number>;
    expectedAlerts: Record<Scenario, number>;
    outbox: Record<string, number>;
    emailsSentToday: Record<Scenario, number>;
    smtpReceived: Record<Scenario, number>;
    ok: boolean;
  };
}

export interface AlertsResult {
  name: 'alerts';
  machine: Machine;
  settings: { connections: number; alertsPerRun: number; warmup: Record<Scenario, number>; smtp: string };
  modes: ModeResult[];
  mailBaselines: {
    /** trackgate's SMTP notifier alone, 8 sends at a time (the outbox worker's width) */
    notifier: MailerResult;
    /** nodemailer, same pool of 3, TCP_NODELAY sockets */
    noDelay: MailerResult;
  };
  /** e-mails/s through trackgate (embedded, redis) / the notifier alone */
  emailRatio: { embedded: number; redis: number };
  /** per mode: trackgate's CPU per alert with an e-mail sent (and suppressed) against only stored (bench/lib/cost.ts) */
  cost: Cost[];
}

/** The SMTP server the outbox delivers to: counts messages per recipient and when the last arrived. */
async function startSmtpSink(): Promise<{
  url: string;
  count(to: string): number;
  lastAt(to: string): number;
  close(): Promise<void>;
}> {
  const counts = new Map<string, number>();
  const last = new Map<string, number>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      stream.on('end', () => {
        const at = performance.now();
        for (const r of session.envelope.rcptTo) {
          counts.set(r.address, (counts.get(r.address) ?? 0) + 1);
          last.set(r.address, at);
        }
        callback();
      });
      stream.resume();
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as { port: number };
  return {
    url: `smtp://127.0.0.1:${port}`,
    count: (to) => counts.get(to) ?? 0,
    lastAt: (to) => last.get(to) ?? 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function api(
  base: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Record<string, any>> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, any>;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function raise(
  gen: Child,
  server: ServerProcess,
  token: string,
  scenario: Scenario,
  amount: number,
): Promise<{ load: HttpLoadResult; serverCpuPct: number; cpuMs: number; cpu0: number; t0: number }> {
  const cpu0 = treeCpuMs(server.pid);
  const t0 = performance.now();
  const load = await gen.call<HttpLoadResult>('run', {
    host: '127.0.0.1',
    port: server.ports.http,
    method: 'POST',
    path: `/api/devices/${DEVICES[scenario].id}/alerts`,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ alert: { alertName: 'SOSButton' } }),
    connections: CONNECTIONS,
    amount,
  });
  const wall = performance.now() - t0;
  const cpuMs = treeCpuMs(server.pid) - cpu0;
  const serverCpuPct = (cpuMs / wall) * 100;
  if (load.non2xx > 0 || load.errors > 0 || load.total !== amount) {
    throw new Error(
      `${scenario}: ${load.total} answers of ${amount} (${JSON.stringify(load.statuses)}), ${load.errors} errors (${load.firstError}): the figures would be meaningless\n${server.log().slice(-5).join('\n')}`,
    );
  }
  return { load, serverCpuPct, cpuMs, cpu0, t0 };
}

async function waitForMail(
  sink: Awaited<ReturnType<typeof startSmtpSink>>,
  to: string,
  expected: number,
  maxMs: number,
): Promise<boolean> {
  const until = performance.now() + maxMs;
  while (sink.count(to) < expected) {
    if (performance.now() > until) return false;
    await new Promise((r) => setTimeout(r, 5));
  }
  return true;
}

async function measureMode(
  mode: ModeResult['mode'],
  sink: Awaited<ReturnType<typeof startSmtpSink>>,
): Promise<ModeResult & { cost: Cost }> {
  const data = tempDir(`alerts-${mode}`);
  const prefix = `tgbench:${process.pid}:${mode}:`;
  const extra: Record<string, string> = { TRACKGATE_SMTP_URL: sink.url, TRACKGATE_RATE_LIMIT: '0' };
  if (mode === 'redis') Object.assign(extra, { TRACKGATE_REDIS_URL: REDIS_URL, TRACKGATE_REDIS_PREFIX: prefix });
  const redis = mode === 'redis' ? new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 }) : undefined;
  try {
    if (redis) {
      await redis.connect();
      await deleteKeys(redis, prefix);
    }
    const server = await startServerProcess(data.dir, extra);
    const gen = await startChild('alerts-http-generator.ts');
    const mailsBefore = { reached: sink.count('reached@bench.test'), huge: sink.count('huge@bench.test') };
    const scenarios: ScenarioResult[] = [];
    let check: ModeResult['check'];
    try {
      const token = await adminToken(server.base);
      for (const s of Object.keys(DEVICES) as Scenario[]) {
        await api(server.base, token, 'POST', '/api/devices', {
          id: DEVICES[s].id,
          name: `bench ${s}`,
          ...DEVICES[s].body,
        });
      }
      log(`${mode}: warm-up, ${WARMUP.none} + ${WARMUP.reached} + ${WARMUP.huge} alerts (none, reached, huge)`);
      for (const s of Object.keys(DEVICES) as Scenario[]) await raise(gen, server, token, s, WARMUP[s]);
      if (!(await waitForMail(sink, 'huge@bench.test', mailsBefore.huge + WARMUP.huge, MAIL_WAIT_MS)))
        throw new Error(`${mode}: the warm-up e-mails did not all arrive`);

      // the store-only baseline runs first and again last (after every e-mail has arrived): drift shows
      const runs: Partial<Record<Scenario, { load: HttpLoadResult; serverCpuPct: number; cpuMs: number }[]>> = {};
      const emails: Partial<ScenarioResult> = {};
      for (const s of ['none', 'reached', 'huge', 'none'] as Scenario[]) {
        log(`${mode}: ${fmt(ALERTS)} alerts on ${DEVICES[s].id} (${DEVICES[s].label})`);
        const mailBase = sink.count('huge@bench.test');
        const r = await raise(gen, server, token, s, ALERTS);
        (runs[s] ??= []).push(r);
        log(
          `${mode}: ${fmt(r.load.requestsPerSec)} alerts/s (server CPU ${r.serverCpuPct.toFixed(0)} %, generator ${r.load.generatorCpuPct.toFixed(0)} %)`,
        );
        if (s === 'huge') {
          const answeredAt = performance.now();
          const all = await waitForMail(sink, 'huge@bench.test', mailBase + ALERTS, MAIL_WAIT_MS);
          const received = sink.count('huge@bench.test') - mailBase;
          emails.cpuUsPerAlertToLastEmail = usPer(treeCpuMs(server.pid) - r.cpu0, r.load.total);
          const end = all ? sink.lastAt('huge@bench.test') : performance.now();
          emails.emailsReceived = received;
          emails.emailsPerSec = received / ((end - r.t0) / 1000);
          emails.mailTailSeconds = Math.max(0, (end - answeredAt) / 1000);
          emails.allEmailsReceived = all;
          log(
            `${mode}: ${fmt(received)} e-mails received, ${fmt(emails.emailsPerSec)} e-mails/s from the first request to the last e-mail`,
          );
        }
      }
      for (const s of ['none', 'reached', 'huge'] as Scenario[]) {
        const rs = runs[s]!;
        const alerts = rs.reduce((n, r) => n + r.load.total, 0);
        const seconds = rs.reduce((n, r) => n + r.load.seconds, 0);
        const last = rs[rs.length - 1];
        scenarios.push({
          scenario: s,
          label: DEVICES[s].label,
          alerts,
          alertsPerSec: alerts / seconds,
          runsPerSec: rs.map((r) => r.load.requestsPerSec),
          latencyP50Ms: last.load.latencyP50Ms,
          latencyP99Ms: last.load.latencyP99Ms,
          serverCpuPct: rs.reduce((n, r) => n + r.serverCpuPct, 0) / rs.length,
          cpuUsPerAlert: rs.map((r) => usPer(r.cpuMs, r.load.total)),
          generatorCpuPct: rs.reduce((n, r) => n + r.load.generatorCpuPct, 0) / rs.length,
          ratioToStoreOnly: 0,
          ...(s === 'huge' && emails),
        });
      }
      const base = scenarios.find((x) => x.scenario === 'none')!.alertsPerSec;
      for (const x of scenarios) x.ratioToStoreOnly = x.alertsPerSec / base;

      // today's counters as the API shows them (in-process or Redis)
      const sentToday = {} as Record<Scenario, number>;
      for (const s of Object.keys(DEVICES) as Scenario[]) {
        sentToday[s] = Number(
          (await api(server.base, token, 'GET', `/api/devices/${DEVICES[s].id}`)).device.emailsSentToday,
        );
      }
      check = {
        storedAlerts: {} as Record<Scenario, number>,
        expectedAlerts: {
          none: WARMUP.none + 2 * ALERTS,
          reached: WARMUP.reached + ALERTS,
          huge: WARMUP.huge + ALERTS,
        },
        outbox: {},
        emailsSentToday: sentToday,
        smtpReceived: {} as Record<Scenario, number>,
        ok: false,
      };
    } finally {
      await gen.stop();
      await server.stop();
    }
    // stored rows, once the server has stopped
    const db = openDb({ dataDir: data.dir });
    try {
      for (const s of Object.keys(DEVICES) as Scenario[]) {
        check.storedAlerts[s] = Number((await db('alerts').where({ device_id: DEVICES[s].id }).count({ n: '*' }))[0].n);
      }
      const rows = await db('outbox').groupBy('device_id', 'status').select('device_id', 'status').count({ n: '*' });
      for (const r of rows as { device_id: string; status: string; n: number }[])
        check.outbox[`${r.device_id}:${r.status}`] = Number(r.n);
    } finally {
      await db.destroy();
    }
    check.smtpReceived = {
      none: 0,
      reached: sink.count('reached@bench.test') - mailsBefore.reached,
      huge: sink.count('huge@bench.test') - mailsBefore.huge,
    };
    const n = WARMUP.huge + ALERTS;
    check.ok =
      (Object.keys(DEVICES) as Scenario[]).every((s) => check.storedAlerts[s] === check.expectedAlerts[s]) &&
      check.smtpReceived.huge === n &&
      check.smtpReceived.reached === 0 &&
      check.emailsSentToday.huge === n &&
      check.emailsSentToday.reached === 0 &&
      check.emailsSentToday.none === 0 &&
      check.outbox[`${DEVICES.huge.id}:sent`] === n &&
      Object.keys(check.outbox).length === 1;
    log(`${mode}: check ${check.ok ? 'ok' : 'FAILED'}: ${JSON.stringify(check)}`);
    const of = (s: Scenario) => scenarios.find((x) => x.scenario === s)!;
    const cost = compareCost(
      'alert',
      figure('trackgate, e-mail sent (limit never reached), to the last e-mail received', [
        of('huge').cpuUsPerAlertToLastEmail ?? NaN,
      ]),
      figure(`trackgate, ${DEVICES.none.label}`, of('none').cpuUsPerAlert),
      {
        name: mode,
        more: [
          figure('trackgate, e-mail sent, until the alert is answered', of('huge').cpuUsPerAlert),
          figure(`trackgate, ${DEVICES.reached.label}`, of('reached').cpuUsPerAlert),
        ],
      },
    );
    return { mode, scenarios, cost, check };
  } finally {
    if (redis) {
      await deleteKeys(redis, prefix).catch(() => {});
      redis.disconnect();
    }
    data.remove();
  }
}

async function deleteKeys(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let n = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) n += await redis.del(...keys);
  } while (cursor !== '0');
  return n;
}

export async function run(): Promise<AlertsResult> {
  const sink = await startSmtpSink();
  try {
    const modes: (ModeResult & { cost: Cost })[] = [];
    // BENCH_ALERTS_MODES=redis,embedded: another order (diagnosis); the report expects both
    const order = (process.env.BENCH_ALERTS_MODES ?? 'embedded,redis').split(',') as ModeResult['mode'][];
    for (const mode of order) modes.push(await measureMode(mode, sink));
    modes.sort((a, b) => (a.mode === 'embedded' ? -1 : b.mode === 'embedded' ? 1 : 0));
    const mailer = await startChild('alerts-mailer.ts');
    let notifier: MailerResult;
    let noDelay: MailerResult;
    try {
      log(
        `e-mail baselines: ${fmt(MAIL_BASELINE.notifier)} e-mails through trackgate's SMTP notifier alone, ${fmt(MAIL_BASELINE.noDelay)} through nodemailer with TCP_NODELAY`,
      );
      await mailer.call('run', { mode: 'notifier', url: sink.url, to: 'warm@bench.test', count: 50, concurrency: 8 });
      notifier = await mailer.call<MailerResult>('run', {
        mode: 'notifier',
        url: sink.url,
        to: 'notifier@bench.test',
        count: MAIL_BASELINE.notifier,
        concurrency: 8,
      });
      await mailer.call('run', { mode: 'nodelay', url: sink.url, to: 'warm@bench.test', count: 200, concurrency: 8 });
      noDelay = await mailer.call<MailerResult>('run', {
        mode: 'nodelay',
        url: sink.url,
        to: 'nodelay@bench.test',
        count: MAIL_BASELINE.noDelay,
        concurrency: 8,
      });
      if (
        sink.count('notifier@bench.test') !== MAIL_BASELINE.notifier ||
        sink.count('nodelay@bench.test') !== MAIL_BASELINE.noDelay
      )
        throw new Error('the SMTP server did not receive every baseline e-mail');
    } finally {
      await mailer.stop();
    }
    const emailsOf = (mode: ModeResult['mode']) =>
      modes.find((m) => m.mode === mode)!.scenarios.find((x) => x.scenario === 'huge')!.emailsPerSec!;
    const result: AlertsResult = {
      name: 'alerts',
      machine: machine(),
      settings: {
        connections: CONNECTIONS,
        alertsPerRun: ALERTS,
        warmup: WARMUP,
        smtp: 'smtp-server in the benchmark process; trackgate: its SMTP notifier (nodemailer pool of 3), outbox worker 8 at a time',
      },
      modes: modes.map(({ cost: _, ...m }) => m),
      mailBaselines: { notifier, noDelay },
      emailRatio: { embedded: emailsOf('embedded') / notifier.perSec, redis: emailsOf('redis') / notifier.perSec },
      cost: modes.map((m) => m.cost),
    };
    printAlerts(result);
    return result;
  } finally {
    await sink.close();
  }
}

export function printAlerts(r: AlertsResult): void {
  for (const m of r.modes) {
    printTable(
      `Alerts, ${m.mode === 'embedded' ? 'embedded (SQLite, in-process counters)' : 'Redis counters (SQLite storage)'}: ${fmt(r.settings.alertsPerRun)} alerts per run (store only: 2 runs), ${r.settings.connections} keep-alive connections`,
      [
        'device',
        'alerts/s',
        'vs store only',
        'e-mails/s (to last received)',
        'p50/p99 ms',
        'server CPU',
        'generator CPU',
      ],
      m.scenarios.map((s) => [
        s.label,
        s.runsPerSec.length > 1
          ? `${fmt(s.alertsPerSec)} (${s.runsPerSec.map((x) => fmt(x)).join(' / ')})`
          : fmt(s.alertsPerSec),
        pct(s.ratioToStoreOnly),
        s.emailsPerSec === undefined
          ? '-'
          : `${fmt(s.emailsPerSec)}${s.allEmailsReceived ? '' : ' (NOT all received)'}`,
        `${s.latencyP50Ms} / ${s.latencyP99Ms}`,
        `${s.serverCpuPct.toFixed(0)} %`,
        `${s.generatorCpuPct.toFixed(0)} %`,
      ]),
    );
    const huge = m.scenarios.find((s) => s.scenario === 'huge');
    if (huge?.mailTailSeconds !== undefined)
      console.log(`last e-mail ${huge.mailTailSeconds.toFixed(1)} s after the last alert was answered`);
    console.log(
      `check (${m.mode}): ${m.check.ok ? 'stored alerts, outbox rows, counters and received e-mails agree' : 'MISMATCH'}: ${JSON.stringify(m.check)}`,
    );
  }
  const e = r.modes.find((m) => m.mode === 'embedded');
  const rd = r.modes.find((m) => m.mode === 'redis');
  if (e && rd) {
    const rate = (m: ModeResult, s: Scenario) => m.scenarios.find((x) => x.scenario === s)!.alertsPerSec;
    console.log(
      `Redis vs embedded, alerts/s: none ${pct(rate(rd, 'none') / rate(e, 'none'))}, reached ${pct(rate(rd, 'reached') / rate(e, 'reached'))}, huge ${pct(rate(rd, 'huge') / rate(e, 'huge'))}`,
    );
  }
  const b = r.mailBaselines;
  printTable(
    'E-mail delivery (same SMTP server)',
    ['path', 'e-mails/s', 'ratio to the notifier alone'],
    [
      [
        'trackgate, embedded: alert -> outbox -> worker -> SMTP',
        fmt(r.modes[0].scenarios.find((s) => s.scenario === 'huge')!.emailsPerSec!),
        pct(r.emailRatio.embedded),
      ],
      [
        'trackgate, Redis counters',
        fmt(r.modes[1].scenarios.find((s) => s.scenario === 'huge')!.emailsPerSec!),
        pct(r.emailRatio.redis),
      ],
      ["trackgate's SMTP notifier alone (nodemailer pool of 3), 8 at a time", fmt(b.notifier.perSec), '100 %'],
      [
        'nodemailer pool of 3 with TCP_NODELAY sockets (SMTP server capacity)',
        fmt(b.noDelay.perSec),
        pct(b.noDelay.perSec / b.notifier.perSec),
      ],
    ],
  );
  if (r.cost) costTable('alerts against alerts only stored', r.cost);
}
