/**
 * AMQP 0-9-1 forwards with `amqplib` (docs/forwards.md): persistent messages on a confirm channel,
 * so a batch counts as delivered only once the broker has confirmed every message. The exchange
 * is the operator's and is not declared. Any failure fails the batch and drops the connection;
 * the delivery loop connects again on its next attempt, to the address forward.targets.ts checked.
 * A broker's close keeps only its reply code and name, not the text the broker sent with it.
 */
import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib';
import type { ForwardMessage } from '../model/forward.js';
import {
  AMQP_SHORTSTR_MAX_BYTES,
  FORWARD_AMQP_EXCHANGE,
  FORWARD_AMQP_ROUTING_KEY,
  checkedTarget,
  expandTemplate,
  safeUrl,
  within,
  type Forwarder,
  type ForwarderSettings,
} from './forwarder.js';

/**
 * The socket's buffer before amqplib's writer waits for it to drain: room for a whole batch, so the
 * batch leaves corked, in large writes (the messages are already in memory, in the batch in hand).
 */
const SOCKET_HIGH_WATER_MARK = 8 * 1024 * 1024;

/**
 * What an amqplib error says, without what the target wrote: a close from the broker keeps its code
 * and name ("Channel closed by server: 404 (NOT-FOUND)"), a frame not expected is said so.
 */
function brokerError(e: Error): string {
  const closed = /^(.*?: \d+ \([A-Z-]+\))/.exec(e.message);
  if (closed) return closed[1];
  if (/^(Expected |Frame on |Unexpected frame)/.test(e.message))
    return 'the server answered with frames AMQP 0-9-1 does not expect here';
  return e.message;
}

/** The connection's socket (amqplib keeps it as `connection.stream`), when it is there. */
function socketOf(conn: ChannelModel | undefined): { cork(): void; uncork(): void } | undefined {
  const stream = (conn as unknown as { connection?: { stream?: { cork?: unknown; uncork?: unknown } } } | undefined)
    ?.connection?.stream;
  return stream && typeof stream.cork === 'function' && typeof stream.uncork === 'function'
    ? (stream as { cork(): void; uncork(): void })
    : undefined;
}

export function createAmqpForwarder(settings: AmqpSettings): Forwarder {
  return new AmqpForwarder(settings);
}

type AmqpSettings = ForwarderSettings & { url: string; exchange: string | null; topic: string | null };

class AmqpForwarder implements Forwarder {
  private readonly exchange: string;
  private readonly template: string;
  private readonly where: string;
  private conn: ChannelModel | undefined;
  private channel: ConfirmChannel | undefined;
  private broken: Error | undefined;
  private closed = false;

  constructor(private readonly settings: AmqpSettings) {
    this.exchange = settings.exchange ?? FORWARD_AMQP_EXCHANGE;
    this.template = settings.topic || FORWARD_AMQP_ROUTING_KEY;
    this.where = safeUrl(settings.url);
  }

  async send(messages: readonly ForwardMessage[]): Promise<void> {
    if (this.closed) throw new Error('the AMQP forwarder is closed');
    const { where, settings } = this;
    const keys = this.routingKeys(messages);
    const ch = await this.open();
    try {
      await within(
        this.publishAll(ch, messages, keys),
        settings.timeoutMs,
        `${where}: no confirm within ${settings.timeoutMs} ms`,
      );
      if (this.broken) throw this.broken;
    } catch (e) {
      const err = this.broken ?? (e as Error);
      this.drop();
      throw err.message.startsWith(where) ? err : new Error(`${where}: ${brokerError(err)}`);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.drop();
  }

  private drop(): void {
    const c = this.conn;
    this.conn = undefined;
    this.channel = undefined;
    c?.close().catch(() => {});
  }

  /** The confirm channel, connecting again when there is none or it broke. */
  private async open(): Promise<ConfirmChannel> {
    if (this.channel && this.conn && !this.broken) return this.channel;
    const { where, settings } = this;
    this.drop();
    this.broken = undefined;
    const c = await this.connect();
    this.conn = c;
    const fail = (e?: Error) => {
      this.broken ??= new Error(`${where}: ${e ? brokerError(e) : 'the connection closed'}`);
    };
    c.on('error', fail);
    c.on('close', fail);
    try {
      const ch = await within(
        c.createConfirmChannel(),
        settings.timeoutMs,
        `${where}: no channel within ${settings.timeoutMs} ms`,
      );
      ch.on('error', fail);
      ch.on('close', () => fail(new Error('the channel closed')));
      this.channel = ch;
      return ch;
    } catch (e) {
      this.drop();
      const err = e as Error;
      throw err.message.startsWith(where) ? err : new Error(`${where}: ${brokerError(err)}`);
    }
  }

  private async connect(): Promise<ChannelModel> {
    const { where, settings } = this;
    const target = await checkedTarget(settings, settings.url, where);
    const options = {
      timeout: settings.timeoutMs,
      noDelay: true,
      writableHighWaterMark: SOCKET_HIGH_WATER_MARK,
      clientProperties: { connection_name: settings.userAgent },
      ...(target.servername && { servername: target.servername }),
    };
    return within(
      amqp.connect(target.urlWithAddress, options),
      settings.timeoutMs,
      `${where}: no connection within ${settings.timeoutMs} ms`,
    ).catch((e: Error) => {
      throw new Error(e.message.startsWith(where) ? e.message : `${where}: ${brokerError(e)}`);
    });
  }

  /**
   * The routing key of each message; a batch with an exchange name or a key longer than AMQP
   * allows fails whole, before anything is published, saying which (amqplib would throw in the
   * middle of the batch). The API refuses such a template; a forward stored before it did delivers
   * while its keys fit and fails here, batch by batch, once one does not, until its topic is changed.
   */
  private routingKeys(messages: readonly ForwardMessage[]): string[] {
    const { exchange, where } = this;
    if (Buffer.byteLength(exchange) > AMQP_SHORTSTR_MAX_BYTES) {
      throw new Error(
        `${where}: the exchange name is ${Buffer.byteLength(exchange)} bytes, more than the ${AMQP_SHORTSTR_MAX_BYTES} AMQP allows: change the forward's exchange`,
      );
    }
    return messages.map((m) => {
      const key = expandTemplate(this.template, m);
      const bytes = Buffer.byteLength(key);
      if (bytes > AMQP_SHORTSTR_MAX_BYTES) {
        throw new Error(
          `${where}: the routing key of device "${m.deviceId}" is ${bytes} bytes, more than the ${AMQP_SHORTSTR_MAX_BYTES} AMQP allows: shorten the forward's topic (routing-key template)`,
        );
      }
      return key;
    });
  }

  /**
   * Publishes the batch and resolves once the broker has confirmed all of it (one callback counts
   * the confirms: no promise per message). The socket is corked while amqplib's writer hands it the
   * batch's frames, so that they leave in a few large writes instead of one system call per message.
   */
  private publishAll(ch: ConfirmChannel, messages: readonly ForwardMessage[], keys: readonly string[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let left = messages.length;
      let refused = 0;
      const confirmed = (err: unknown) => {
        if (err) refused++;
        if (--left > 0) return;
        if (refused)
          reject(
            this.broken ?? new Error(`${this.where}: the broker refused ${refused} of ${messages.length} messages`),
          );
        else resolve();
      };
      const socket = socketOf(this.conn);
      socket?.cork();
      try {
        for (const [i, m] of messages.entries()) {
          ch.publish(
            this.exchange,
            keys[i],
            Buffer.from(m.json),
            { persistent: true, contentType: 'application/json', messageId: String(m.id), type: m.event },
            confirmed,
          );
        }
      } finally {
        // amqplib writes the channel's frames to the socket on its next setImmediate: uncork after it
        if (socket) setImmediate(() => setImmediate(() => socket.uncork()));
      }
    });
  }
}
