/**
 * What the gateway knows of each aedes client, kept beside the client and never on it (aedes'
 * Client fields are aedes' own): the connection as our listener handed it to `broker.handle`, and
 * from a successful login on, the session: who the client is, its publish order and rate, and for
 * an API user its place in the live feed.
 */
import type { Duplex } from 'node:stream';
import type { Client } from 'aedes';
import type { Identity } from './mqtt.auth.js';
import type { PublishBucket } from './publish.limits.js';
import type { LiveSubscriber } from './live.feed.js';

/** A connection as the listener accepted it. */
export interface Connection {
  /** the stream given to aedes (the packet-size guard in front of the socket) */
  readonly stream: Duplex;
  readonly remoteAddress: string | null;
}

/** A logged-in client. */
export interface Session {
  identity: Identity;
  /** its publish rate */
  bucket: PublishBucket;
  /** its last hand-off to the core: the next publish waits for it, so publishes keep arrival order */
  tail: Promise<unknown>;
  remoteAddress: string | null;
  /** API users, from clientReady on: where the live feed reaches it */
  live?: LiveSubscriber;
  /** an API user that subscribed to a filter matching `live/…/frames`: frames are built for its account from then on */
  wantsFrames?: boolean;
  /** a device with a subscription covering `devices/{id}/commands` (made or restored): its commands go to this client */
  takesCommands?: boolean;
}

export class Sessions {
  private readonly connections = new WeakMap<Client, Connection>();
  private readonly sessions = new WeakMap<Client, Session>();
  /** userId -> its clients that have a live feed */
  private readonly byUser = new Map<string, Set<Client>>();

  connected(client: Client, connection: Connection): void {
    this.connections.set(client, connection);
  }

  connection(client: Client): Connection | undefined {
    return this.connections.get(client);
  }

  open(client: Client, session: Session): void {
    this.sessions.set(client, session);
  }

  get(client: Client): Session | undefined {
    return this.sessions.get(client);
  }

  /** An API user's client joins the live feed. */
  addLive(client: Client, session: Session, subscriber: LiveSubscriber): void {
    session.live = subscriber;
    const mine = this.byUser.get(subscriber.principal.userId) ?? new Set<Client>();
    mine.add(client);
    this.byUser.set(subscriber.principal.userId, mine);
  }

  /** The client leaves the live feed; answers what it had there. */
  dropLive(client: Client): LiveSubscriber | undefined {
    const session = this.sessions.get(client);
    const subscriber = session?.live;
    if (!session || !subscriber) return undefined;
    session.live = undefined;
    const mine = this.byUser.get(subscriber.principal.userId);
    mine?.delete(client);
    if (mine?.size === 0) this.byUser.delete(subscriber.principal.userId);
    return subscriber;
  }

  clientsOf(userId: string): Iterable<Client> {
    return this.byUser.get(userId) ?? [];
  }

  /** The users that have a client with a live feed. */
  userIds(): Iterable<string> {
    return this.byUser.keys();
  }
}
