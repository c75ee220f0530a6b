/**
 * The commands of the device identified on one connection (docs/contract.md "Commands";
 * docs/commands.md): a TCP socket, a UDP tracker's last address, an MQTT device's client.
 * The queue is delivered in order, one in flight (until its answer or `waitMs`). An answer belongs
 * to the oldest sent command whose `match` it carries, or to the oldest one when the protocol echoes
 * nothing; an answer that belongs to none goes to the device's log. Nothing is kept across
 * connections: the core queues unanswered commands again when the device next identifies itself.
 */
import type { CommandMatch, CommandResult, EncodedCommand, ProtocolModule } from '../../protocols/types.js';
import { CommandError } from '../../protocols/types.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { CommandRecord } from '../../core/model/command.js';
import { commandBytes, type CommandsService } from '../../core/commands/commands.service.js';

/** What a connection asks of the command queue: the core's service, or in a gateway process the same over gateway/ipc/. */
export type CommandQueue = Pick<
  CommandsService,
  'recover' | 'next' | 'markSent' | 'markFailed' | 'answered' | 'unsolicited'
>;

export interface ConnectionCommandsOptions {
  commands: CommandQueue;
  /** the device's protocol: its encoder wraps Text commands (unless `encode` is given) */
  protocol?: ProtocolModule;
  /** the protocol's name, for the log and the device's log */
  protocolName: string;
  /** a channel's own framing of every command (MQTT devices: the JSON `{id, command, format}`); else `protocol`'s encoder and raw Hex/Base64 */
  encode?(c: CommandRecord): EncodedCommand;
  clock: Clock;
  logger: Logger;
  /** how long a command without an answer holds back the next one */
  waitMs: number;
  deviceId: string;
  /** the device's model and the decoder session, as the encoder reads them */
  context?(): { model?: string; options?: Readonly<Record<string, string>>; session: Record<string, unknown> };
  /** a reply that answers no command sent on this connection (default: kept in the device's log) */
  unmatched?(r: CommandResult): Promise<void>;
  /** writes to the connection; false when it is closed */
  write(bytes: Buffer): boolean;
  where(): Record<string, unknown>;
}

interface Awaiting {
  id: number;
  match: CommandMatch;
}

/** GT06 and JT808 serials are u16 */
const SERIAL_MODULO = 0x10000;

export class ConnectionCommands {
  private readonly awaiting: Awaiting[] = [];
  private inFlight?: { id: number; timer: NodeJS.Timeout };
  private serial = 0;
  private recovered = false;
  private closed = false;
  /** closed by a planned stop: a call to the queue it cuts short is not a failure to log */
  private stopping = false;
  private running = false;
  private again = false;

  constructor(private readonly o: ConnectionCommandsOptions) {}

  /** Delivers the next queued command unless one is in flight (safe to call at any time, from anywhere). */
  kick(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.deliver()
      .catch((e: unknown) => {
        if (!this.stopping)
          this.o.logger.warn(
            { ...this.o.where(), err: (e as Error).message },
            'command delivery failed; retried when the device next connects or a command is added',
          );
      })
      .finally(() => {
        this.running = false;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /**
   * The connection closed: nothing more is written; unanswered commands go back to the queue at
   * the next identification. `stopping`: closed by a planned stop (the queue's calls in progress
   * fail as the link to the core closes; nothing is lost by that).
   */
  close(o: { stopping?: boolean } = {}): void {
    this.closed = true;
    if (o.stopping) this.stopping = true;
    if (this.inFlight) clearTimeout(this.inFlight.timer);
    this.inFlight = undefined;
  }

  /** Answers the device sent: each tied to the command it answers, or logged as unsolicited. */
  async answer(results: CommandResult[]): Promise<void> {
    for (const r of results) {
      const at = this.matching(r);
      if (at < 0) {
        await (this.o.unmatched ?? ((x: CommandResult) => this.unsolicited(x)))(r);
        continue;
      }
      const [done] = this.awaiting.splice(at, 1);
      if (this.inFlight?.id === done.id) {
        clearTimeout(this.inFlight.timer);
        this.inFlight = undefined;
      }
      await this.o.commands.answered(done.id, answerText(r));
    }
    this.kick();
  }

  /** A reply that answers no command: logged and kept in the device's log. */
  async unsolicited(r: CommandResult): Promise<void> {
    this.o.logger.info(
      { ...this.o.where(), text: r.text.slice(0, 200), ...(r.status && { status: r.status }) },
      'device reply that answers no command sent on this connection; kept in its log',
    );
    await this.o.commands.unsolicited(this.o.deviceId, {
      protocol: this.o.protocolName,
      text: r.text,
      ...(r.status && { status: r.status }),
    });
  }

  private matching(r: CommandResult): number {
    const keys = (m: CommandMatch) => Object.keys(m) as (keyof CommandMatch)[];
    const exact = this.awaiting.findIndex(
      (a) => keys(a.match).length > 0 && keys(a.match).every((k) => r[k] === a.match[k]),
    );
    if (exact >= 0) return exact;
    // an answer that echoes nothing a command waits for is the oldest one's
    const echoes = this.awaiting.some((a) => keys(a.match).some((k) => r[k] !== undefined));
    return echoes ? -1 : this.awaiting.length ? 0 : -1;
  }

  private async deliver(): Promise<void> {
    if (!this.recovered) {
      await this.o.commands.recover(this.o.deviceId);
      this.recovered = true;
    }
    while (!this.closed && !this.inFlight) {
      const c = await this.o.commands.next(this.o.deviceId);
      if (!c || this.closed) return;
      const encoded = this.encode(c);
      if (typeof encoded === 'string') {
        await this.o.commands.markFailed(c.id, encoded);
        continue;
      }
      // Marked sent before the write: should the mark fail, nothing was written, so nothing goes twice.
      if (!(await this.o.commands.markSent(c.id, { ...encoded.match }))) continue;
      if (this.closed || !this.o.write(encoded.bytes)) return;
      this.awaiting.push({ id: c.id, match: encoded.match });
      const timer = setTimeout(() => {
        if (this.inFlight?.id !== c.id) return;
        this.inFlight = undefined;
        this.kick();
      }, this.o.waitMs);
      timer.unref();
      this.inFlight = { id: c.id, timer };
      this.o.logger.info({ ...this.o.where(), command: c.id, format: c.format }, 'command sent');
    }
  }

  /** The bytes for the connection, or why they cannot be made. */
  private encode(c: CommandRecord): { bytes: Buffer; match: CommandMatch } | string {
    if (this.o.encode) return this.o.encode(c);
    if (c.format !== 'Text') {
      const bytes = commandBytes(c.format, c.command);
      return typeof bytes === 'string' ? bytes : { bytes, match: {} };
    }
    const protocol = this.o.protocol;
    if (!protocol?.encodeCommand)
      return `The ${this.o.protocolName} protocol carries no commands (COMMAND_UNSUPPORTED).`;
    const serial = this.serial;
    this.serial = (this.serial + 1) % SERIAL_MODULO;
    try {
      const { model, options, session } = this.o.context?.() ?? { session: {} };
      return protocol.encodeCommand(c.command, {
        deviceId: this.o.deviceId,
        now: this.o.clock.now(),
        serial,
        model,
        ...(options && { options }),
        session,
      });
    } catch (e) {
      if (e instanceof CommandError) return `${e.message} (${e.reason})`;
      throw e;
    }
  }
}

/** The answer's text as stored with the command: a status-only answer (JT808 0x0001) says its status. */
function answerText(r: CommandResult): string {
  if (r.text) return r.text;
  return r.status ?? '';
}
