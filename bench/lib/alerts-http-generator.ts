/**
 * HTTP/1.1 load generator for the alerts benchmark, in its own process: keep-alive raw `net`
 * sockets, one pre-encoded request written again and again, one request in flight per connection,
 * exactly `amount` requests in all, timed to the last response (autocannon's `amount` mode ends on
 * its one-second ticker, which is too coarse for runs of a few seconds).
 */
import net from 'node:net';
import { serveCommands } from './child.js';

export interface HttpLoadArgs {
  host: string;
  port: number;
  method: 'POST' | 'GET';
  path: string;
  headers: Record<string, string>;
  body?: string;
  connections: number;
  amount: number;
  /** give up after this long (ms) */
  timeoutMs?: number;
}

export interface HttpLoadResult {
  total: number;
  /** answers by status code */
  statuses: Record<string, number>;
  non2xx: number;
  errors: number;
  firstError?: string;
  seconds: number;
  requestsPerSec: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMaxMs: number;
  /** CPU used by this process during the run, % of one core */
  generatorCpuPct: number;
}

const HEADER_END = Buffer.from('\r\n\r\n');

function encodeRequest(a: HttpLoadArgs): Buffer {
  const body = a.body === undefined ? Buffer.alloc(0) : Buffer.from(a.body);
  const lines = [`${a.method} ${a.path} HTTP/1.1`, `Host: ${a.host}:${a.port}`, 'Connection: keep-alive'];
  for (const [k, v] of Object.entries(a.headers)) lines.push(`${k}: ${v}`);
  if (body.length || a.method === 'POST') lines.push(`Content-Length: ${body.length}`);
  return Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n'), body]);
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function run(a: HttpLoadArgs): Promise<HttpLoadResult> {
  const request = encodeRequest(a);
  const latencies = new Float64Array(a.amount);
  const statuses: Record<string, number> = {};
  let issued = 0;
  let answered = 0;
  let errors = 0;
  let firstError: string | undefined;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let tEnd = t0;

  return new Promise((resolve) => {
    const sockets: net.Socket[] = [];
    let open = 0;
    let finished = false;
    const timer = setTimeout(() => finish(), a.timeoutMs ?? 120_000);

    function finish(): void {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      for (const s of sockets) s.destroy();
      const cpu = process.cpuUsage(cpu0);
      const seconds = ((answered === a.amount ? tEnd : performance.now()) - t0) / 1000;
      const sorted = latencies.slice(0, answered).sort();
      const non2xx = Object.entries(statuses).reduce((n, [code, c]) => (code.startsWith('2') ? n : n + c), 0);
      resolve({
        total: answered,
        statuses,
        non2xx,
        errors,
        firstError,
        seconds,
        requestsPerSec: answered / seconds,
        latencyP50Ms: Math.round(percentile(sorted, 50) * 10) / 10,
        latencyP99Ms: Math.round(percentile(sorted, 99) * 10) / 10,
        latencyMaxMs: Math.round((sorted[sorted.length - 1] ?? 0) * 10) / 10,
        generatorCpuPct: ((cpu.user + cpu.system) / 1000 / (seconds * 1000)) * 100,
      });
    }

    function connection(): void {
      const socket = net.connect({ host: a.host, port: a.port, noDelay: true });
      sockets.push(socket);
      open++;
      let buffered: Buffer = Buffer.alloc(0);
      let sentAt = 0;
      let slot = -1;
      let expect = -1; // bytes of the response being read (headers + body), -1: headers not seen yet
      const send = (): void => {
        if (issued >= a.amount) {
          socket.end();
          return;
        }
        slot = issued++;
        sentAt = performance.now();
        socket.write(request);
      };
      socket.on('connect', send);
      socket.on('data', (chunk: Buffer) => {
        buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
        for (;;) {
          if (expect < 0) {
            const end = buffered.indexOf(HEADER_END);
            if (end < 0) return;
            const head = buffered.subarray(0, end).toString('latin1');
            const status = head.slice(9, 12);
            const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
            if (!m) {
              errors++;
              firstError ??= `response without Content-Length: ${head.slice(0, 200)}`;
              socket.destroy();
              return;
            }
            statuses[status] = (statuses[status] ?? 0) + 1;
            expect = end + 4 + Number(m[1]);
          }
          if (buffered.length < expect) return;
          buffered = buffered.subarray(expect);
          expect = -1;
          const now = performance.now();
          latencies[slot] = now - sentAt;
          answered++;
          tEnd = now;
          if (answered === a.amount) return finish();
          send();
        }
      });
      socket.on('error', (e) => {
        errors++;
        firstError ??= e.message;
      });
      socket.on('close', () => {
        open--;
        if (open === 0) finish();
      });
    }

    for (let i = 0; i < Math.min(a.connections, a.amount); i++) connection();
  });
}

serveCommands({ run });
