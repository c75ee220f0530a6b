/**
 * Webhook forwards (docs/forwards.md): each batch is POSTed as JSON arrays, split by message count
 * and UTF-8 body size, signed with the forward's `secret` when it has one; any 2xx accepts it.
 * node:http rather than fetch: the connection and the answer each get their own timeout, and
 * connections are kept alive. Each connection goes to addresses forward.targets.ts checked.
 * A failure keeps only the status code and its standard name, never what the target wrote.
 */
import http from 'node:http';
import https from 'node:https';
import { createHmac } from 'node:crypto';
import type { ForwardMessage } from '../model/forward.js';
import { safeUrl, type Forwarder, type ForwarderSettings } from './forwarder.js';
import { ForwardTargetRefused, targetPort, type ForwardTargets } from './forward.targets.js';

/**
 * The largest body of one POST in bytes (its Content-Length: a receiver's limit, such as nginx's
 * client_max_body_size 1m, counts bytes), and the most messages in one; a larger batch is sent as
 * several, in order.
 */
export const WEBHOOK_MAX_BODY_BYTES = 1024 * 1024;
export const WEBHOOK_MAX_MESSAGES = 500;

export function createWebhookForwarder(settings: WebhookSettings): Forwarder {
  return new WebhookForwarder(settings);
}

type WebhookSettings = ForwarderSettings & { forwardId: string; url: string; secret: string | null };

class WebhookForwarder implements Forwarder {
  private readonly target: URL;
  private readonly client: typeof http | typeof https;
  private readonly agent: http.Agent;
  private readonly headers: Record<string, string>;
  private readonly where: string;
  private readonly lookup: ReturnType<ForwardTargets['lookup']>;
  private readonly inFlight = new Set<http.ClientRequest>();
  private closed = false;

  constructor(private readonly settings: WebhookSettings) {
    const target = (this.target = new URL(settings.url));
    this.client = target.protocol === 'https:' ? https : http;
    this.agent = new this.client.Agent({ keepAlive: true, maxSockets: 1 });
    this.headers = {
      'content-type': 'application/json',
      'user-agent': settings.userAgent,
      'x-trackgate-forward': settings.forwardId,
    };
    if (target.username || target.password) {
      this.headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64')}`;
    }
    this.where = safeUrl(settings.url);
    // every new socket connects to addresses checked for this port (a host name resolved at each connect)
    this.lookup = settings.targets.lookup(targetPort(target));
  }

  async send(messages: readonly ForwardMessage[]): Promise<void> {
    if (this.closed) throw new Error('the webhook forwarder is closed');
    let parts: string[] = [];
    // bytes of UTF-8, not string length: a Japanese or Cyrillic text is 2 to 3 bytes a character
    let bodyBytes = 2;
    for (const m of messages) {
      const bytes = Buffer.byteLength(m.json);
      if (parts.length && (bodyBytes + bytes + 1 > WEBHOOK_MAX_BODY_BYTES || parts.length === WEBHOOK_MAX_MESSAGES)) {
        await this.post(`[${parts.join(',')}]`);
        parts = [];
        bodyBytes = 2;
      }
      parts.push(m.json);
      bodyBytes += bytes + 1;
    }
    if (parts.length) await this.post(`[${parts.join(',')}]`);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const req of this.inFlight) req.destroy();
    this.agent.destroy();
  }

  private post(body: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const { settings, where } = this;
      // an address in the URL is connected to without a lookup: checked here
      const refused = settings.targets.refusedAsWritten(this.target);
      if (refused) return reject(new Error(`${where}: refused: ${refused}`));
      const h: Record<string, string | number> = { ...this.headers, 'content-length': Buffer.byteLength(body) };
      if (settings.secret)
        h['x-trackgate-signature'] = `sha256=${createHmac('sha256', settings.secret).update(body).digest('hex')}`;
      const req = this.client.request(this.target, {
        method: 'POST',
        headers: h,
        agent: this.agent,
        auth: undefined,
        lookup: this.lookup,
      });
      this.inFlight.add(req);
      req.on('close', () => this.inFlight.delete(req));
      this.roundTrip(req, body, resolve, reject);
    });
  }

  /** Sends `body` and settles once the answer is complete, or on the first failure or timeout. */
  private roundTrip(req: http.ClientRequest, body: string, resolve: () => void, reject: (e: Error) => void): void {
    const { settings, where } = this;
    let timer: NodeJS.Timeout | undefined;
    const fail = (message: string) => {
      clearTimeout(timer);
      req.destroy();
      reject(new Error(message));
    };
    // the connection: a fresh socket must connect within the timeout (a kept-alive one is ready)
    req.on('socket', (socket) => {
      if (!socket.connecting) return;
      const t = setTimeout(() => fail(`${where}: no connection within ${settings.timeoutMs} ms`), settings.timeoutMs);
      socket.once('connect', () => clearTimeout(t));
      socket.once('close', () => clearTimeout(t));
    });
    req.on('error', (e: NodeJS.ErrnoException) =>
      fail(e instanceof ForwardTargetRefused ? `${where}: refused: ${e.message}` : `${where}: ${e.code ?? e.message}`),
    );
    req.on('response', (res) => {
      // the body is read and let go: what the target answers never reaches the status (a forward
      // aimed at an internal service would show what that service says to an account admin)
      res.resume();
      res.on('error', (e) => fail(`${where}: ${e.message}`));
      res.on('end', () => {
        clearTimeout(timer);
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) resolve();
        else
          reject(
            new Error(`${where} answered ${status} ${http.STATUS_CODES[status] ?? '(a status HTTP does not define)'}`),
          );
      });
    });
    // the answer: complete within the timeout once the request is sent
    req.end(body, () => {
      timer = setTimeout(() => fail(`${where}: no answer within ${settings.timeoutMs} ms`), settings.timeoutMs);
    });
  }
}
