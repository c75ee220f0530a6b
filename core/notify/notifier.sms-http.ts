/**
 * Alert SMS through an HTTP gateway: POST JSON `{to, text, deviceId, alertName}`; any 2xx is
 * accepted. Credentials in the URL (`https://user:pass@sms.example.com/send`) become Basic auth,
 * since fetch refuses URLs that carry them.
 */
import type { Notifier } from './notifier.js';

export interface SmsHttpSettings {
  url: string;
  timeoutMs?: number;
}

export function createSmsHttpNotifier({ url, timeoutMs = 10_000 }: SmsHttpSettings): Notifier {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Error(`SMS gateway URL must be http:// or https://, not ${target.protocol}//`);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/plain, */*' };
  if (target.username || target.password) {
    const credentials = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
    headers.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`;
    target.username = '';
    target.password = '';
  }
  // Error messages name the gateway without its credentials or query.
  const where = `${target.origin}${target.pathname}`;

  return {
    async send(m) {
      let res: Response;
      try {
        res = await fetch(target, {
          method: 'POST',
          headers,
          body: JSON.stringify({ to: m.to, text: m.text, deviceId: m.deviceId, alertName: m.alertName }),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (e) {
        const err = e as Error & { cause?: { code?: string; message?: string } };
        if (err.name === 'TimeoutError') throw new Error(`SMS gateway ${where} did not answer within ${timeoutMs} ms`);
        throw new Error(`SMS gateway ${where} unreachable: ${err.cause?.code ?? err.cause?.message ?? err.message}`);
      }
      const body = await res.text().catch(() => '');
      if (!res.ok) throw new Error(`SMS gateway ${where} answered ${res.status} ${res.statusText}${body ? `: ${body.slice(0, 200)}` : ''}`);
    },
    async close() {},
  };
}
