/**
 * Real receivers for notifier tests, on port 0: an SMTP server (smtp-server) and an HTTP SMS
 * gateway (node:http), each recording what arrives. No mocks: the notifiers speak real protocols.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** RCPT TO addresses of the envelope */
  recipients: string[];
  from: string;
  headers: Record<string, string>;
  text: string;
  html: string;
  raw: string;
}

export interface SmtpReceiver {
  url: string;
  mails: ReceivedMail[];
  /** RCPT TO addresses answered 550 (with `rejectRecipients`) */
  rejected: string[];
  close(): Promise<void>;
}

/** `rejectRecipients`: every RCPT TO answers 550, as a server refusing the address would. `port`: a given one instead of a free one. */
export async function startSmtpReceiver(
  options: { rejectRecipients?: boolean; port?: number } = {},
): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  const rejected: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (options.rejectRecipients) {
        rejected.push(address.address);
        const err = Object.assign(new Error(`mailbox ${address.address} unavailable`), { responseCode: 550 });
        return callback(err);
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        mails.push({ recipients: session.envelope.rcptTo.map((r) => r.address), from, ...parseMime(raw), raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.server.address() as { port: number };
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    rejected,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface SmsRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
  /** the status the receiver answered this request with */
  status: number;
}

export interface HttpReceiver {
  url: string;
  requests: SmsRequest[];
  close(): Promise<void>;
}

/** Answers every request with `status` (200 by default) after `delayMs`. */
export async function startSmsReceiver(
  options: { status?: number; body?: string; delayMs?: number } = {},
): Promise<HttpReceiver> {
  const requests: SmsRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {}
      const status = options.status ?? 200;
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, status });
      setTimeout(() => {
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(options.body ?? 'queued');
      }, options.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/sms`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The kernel's range for ports chosen by `listen(0)` and outgoing connections
 * (/proc/sys/net/ipv4/ip_local_port_range; IANA's 49152-65535 where that cannot be read).
 */
export function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low > 0 && high >= low) return [low, high];
  } catch {
    // not Linux
  }
  return [49152, 65535];
}

/** What a TCP connection to 127.0.0.1:port meets: undefined when something accepts it, else the error's code (ECONNREFUSED: nothing listens). */
export function connectError(port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(undefined)));
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code));
  });
}

const handedOut = new Set<number>();

/**
 * A port nothing listens on, for a receiver that is down (and for a server of the test's own that
 * it starts there later). It lies below the kernel's ephemeral range, so no `listen(0)` of this or
 * any concurrent test, and no outgoing connection, can take it while the test counts on it being
 * closed; a port in that range, bound and released, was taken by the next test's server now and
 * then (an SMTP relay that should refuse answered as another test's receiver). Never the same port
 * twice in one process; checked refused on 127.0.0.1 before it is handed out.
 */
export async function closedPort(): Promise<number> {
  const [low] = ephemeralRange();
  const first = 10_000;
  if (low - first < 1000)
    throw new Error(`the ephemeral port range starts at ${low}: no room below it for closed ports`);
  for (let i = 0; i < 100; i++) {
    const port = first + Math.floor(Math.random() * (low - first));
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if ((await connectError(port)) === 'ECONNREFUSED') return port;
  }
  throw new Error('no closed port found below the ephemeral range');
}

// Just enough MIME for nodemailer's output: headers, one level of multipart, 7bit/QP/base64.
function parseMime(raw: string): { headers: Record<string, string>; text: string; html: string } {
  const { headers, body } = splitHeaders(raw);
  const out = { headers, text: '', html: '' };
  const boundary = /boundary="?([^";]+)"?/i.exec(headers['content-type'] ?? '')?.[1];
  const parts = boundary
    ? body
        .split(`--${boundary}`)
        .slice(1, -1)
        .map((p) => splitHeaders(p.replace(/^\r\n/, '')))
    : [{ headers, body }];
  for (const part of parts) {
    const decoded = decodeBody(part.body, part.headers['content-transfer-encoding'] ?? '7bit');
    if (/^text\/plain/i.test(part.headers['content-type'] ?? 'text/plain')) out.text = decoded;
    if (/^text\/html/i.test(part.headers['content-type'] ?? '')) out.html = decoded;
  }
  return out;
}

function splitHeaders(raw: string): { headers: Record<string, string>; body: string } {
  const end = raw.indexOf('\r\n\r\n');
  const head = end < 0 ? raw : raw.slice(0, end);
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = decodeWords(line.slice(colon + 1).trim());
  }
  return { headers, body: end < 0 ? '' : raw.slice(end + 4) };
}

/** RFC 2047 encoded words (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`), as a mail client shows them; the space between two is dropped (§6.2). */
function decodeWords(value: string): string {
  return value
    .replace(/(\?=)\s+(=\?)/g, '$1$2')
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_, _charset: string, kind: string, text: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : decodeBody(text.replace(/_/g, ' '), 'quoted-printable'),
    );
}

function decodeBody(body: string, encoding: string): string {
  if (/base64/i.test(encoding)) return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (/quoted-printable/i.test(encoding)) {
    const escaped = body
      .replace(/=\r\n/g, '')
      .replace(/%/g, '%25')
      .replace(/=([0-9A-F]{2})/gi, (_, hex: string) => `%${hex}`);
    return decodeURIComponent(escaped);
  }
  return body;
}
