/**
 * What a forward's delivery loop (forward.runner.ts) needs of a target: send a batch, resolving
 * only once the target has taken every message of it (a webhook's 2xx, MQTT PUBACKs, AMQP
 * confirms), rejecting otherwise (the loop sends the batch again later). One adapter per target
 * type: forwarder.webhook.ts, forwarder.mqtt.ts, forwarder.amqp.ts.
 */
import type { ForwardMessage } from '../model/forward.js';
import { DEVICE_ID_MAX_LENGTH } from '../model/device.js';
import { parseAddress } from '../addresses.js';
import { ForwardTargetRefused, targetPort, type ForwardTargets } from './forward.targets.js';

/** The default topic template of an mqtt forward. */
export const FORWARD_MQTT_TOPIC = 'trackgate/{deviceId}/{event}';
/** The default exchange of an amqp forward: RabbitMQ's predeclared topic exchange. */
export const FORWARD_AMQP_EXCHANGE = 'amq.topic';
/** The default routing-key template of an amqp forward (dots: the separator of topic exchanges). */
export const FORWARD_AMQP_ROUTING_KEY = 'trackgate.{deviceId}.{event}';

export interface Forwarder {
  /** Messages in stream order; at least once: a batch that fails is sent again whole. */
  send(messages: readonly ForwardMessage[]): Promise<void>;
  /** Lets go of connections (a send in flight fails). */
  close(): Promise<void>;
}

export interface ForwarderSettings {
  /** the longest wait for a connection, and for the target's answer (response, PUBACKs, confirms) */
  timeoutMs: number;
  /** the User-Agent of webhook requests, the client id prefix of MQTT */
  userAgent: string;
  /** where forwards may connect: every connection goes to addresses these checked */
  targets: ForwardTargets;
}

/** `{deviceId}` and `{event}` (location | alert) of a topic or routing-key template. */
export function expandTemplate(template: string, m: Pick<ForwardMessage, 'deviceId' | 'event'>): string {
  return template.replaceAll('{deviceId}', m.deviceId).replaceAll('{event}', m.event);
}

/** AMQP 0-9-1 short strings (exchange names, routing keys) hold at most this many bytes: one length octet (AMQP 0-9-1 4.2.5.3). */
export const AMQP_SHORTSTR_MAX_BYTES = 255;

/** A template as long as it can expand: `{deviceId}` as the longest device id (ASCII), `{event}` as "location" (the longer event). */
export function longestExpansion(template: string): string {
  return expandTemplate(template, { deviceId: 'x'.repeat(DEVICE_ID_MAX_LENGTH), event: 'location' });
}

/** A URL as error messages and logs name it: no credentials, no query. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return 'an unreadable URL';
  }
}

/** Rejects with `what` after `ms` unless `p` settles first. */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(what)), ms))),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Where an MQTT or AMQP client is to connect: the URL's host resolved and checked (forward.targets.ts),
 * the first address given to the client in its place, so that the client's own URL parser and
 * resolver never choose another; `servername` keeps TLS (SNI and the certificate check) on the name.
 */
export async function checkedTarget(
  settings: ForwarderSettings,
  url: string,
  where: string,
): Promise<{ address: string; urlWithAddress: string; servername?: string }> {
  const u = new URL(url);
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  try {
    const [first] = await within(
      settings.targets.resolve(host, targetPort(u)),
      settings.timeoutMs,
      `${where}: ${host} not resolved within ${settings.timeoutMs} ms`,
    );
    const servername = parseAddress(host) ? undefined : host;
    u.hostname = first.family === 6 ? `[${first.address}]` : first.address;
    return { address: first.address, urlWithAddress: u.toString(), ...(servername && { servername }) };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err instanceof ForwardTargetRefused) throw new Error(`${where}: refused: ${err.message}`);
    throw err.message.startsWith(where) ? err : new Error(`${where}: ${err.code ?? err.message}`);
  }
}
