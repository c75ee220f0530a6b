/**
 * Alert SMS through an HTTP gateway: POST JSON `{to, text, deviceId, alertName}`; any 2xx is
 * accepted. Credentials in the URL (`https://user:pass@sms.example.com/send`) become Basic auth,
 * since fetch refuses URLs that carry them.
 */
import type { Notifier, OutgoingMessage } from './notifier.js';

export interface SmsHttpSettings {
  url: string;
  /** longest wait for the gateway's answer (connection, headers and body) before send() throws */
  timeoutMs?: number;
}

export function createSmsHttpNotifier({ url, timeoutMs = 10_000 }: SmsHttpSettings): Notifier {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw new Error(`SMS gateway URL must be http:// or https://, not ${target.protocol}//`);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/plain, */*',
  };
  if (target.username || target.password) {
    const credentials = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
    headers.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`;
    target.username = '';
    target.password = '';
  }
  // Error messages name the gateway without its credentials or query.
  const where = `${target.origin}${target.pathname}`;
  // close() lets go of requests in flight instead of waiting for a gateway that hangs.
  const inFlight = new Set<AbortController>();
  let closed = false;

  async function post(m: OutgoingMessage, signal: AbortSignal): Promise<void> {
    let res: Response;
    try {
      res = await fetch(target, {
        method: 'POST',
        headers,
        body: JSON.stringify({ to: m.to, text: m.text, deviceId: m.deviceId, alertName: m.alertName }),
        signal,
      });
    } catch (e) {
      const err = e as Error & { cause?: { code?: string; message?: string } };
      if (closed) throw new Error(`the SMS notifier was closed while sending to ${where}`);
      if (signal.aborted) throw new Error(`SMS gateway ${where} did not answer within ${timeoutMs} ms`);
      throw new Error(`SMS gateway ${where} unreachable: ${err.cause?.code ?? err.cause?.message ?? err.message}`);
    }
    // 2xx headers mean accepted; the body only adds to an error message (its read obeys the signal).
    const body = await res.text().catch(() => '');
    if (!res.ok)
      throw new Error(
        `SMS gateway ${where} answered ${res.status} ${res.statusText}${body ? `: ${body.slice(0, 200)}` : ''}`,
      );
  }

  return {
    async send(m) {
      if (closed) throw new Error('the SMS notifier is closed');
      // One signal for the whole exchange, not AbortSignal.timeout: close() must be able to abort it too.
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), timeoutMs);
      inFlight.add(abort);
      try {
        await post(m, abort.signal);
      } finally {
        clearTimeout(timer);
        inFlight.delete(abort);
      }
    },
    async close() {
      closed = true;
      for (const abort of inFlight) abort.abort();
    },
  };
}
