/**
 * An account's forwards (docs/contract.md "Forwards", *ext* `/api/forwards`): admin only, and not for
 * a user restricted to a group (a forward carries the whole account's data). Another account's
 * forward is FORWARD_NOT_FOUND. Credentials are write-only: the URL's password and `secret` read
 * back as "***", and "***" given back (a PUT of what GET showed, a PATCH) keeps what is stored.
 * A new forward starts with what is stored from then on; so does a forward enabled again (a
 * disabled forward keeps no backlog).
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Principal } from '../model/user.js';
import {
  FORWARD_EVENT_KINDS,
  FORWARD_TYPES,
  type Forward,
  type ForwardEventKind,
  type ForwardProgress,
  type ForwardType,
} from '../model/forward.js';
import { DomainError, notFound } from '../errors.js';
import { requirePrivilege } from '../access/access.js';
import * as groups from '../groups/groups.repository.js';
import * as repo from './forwards.repository.js';
import { DEVICE_ID_MAX_LENGTH } from '../model/device.js';
import type { ForwardTargets } from './forward.targets.js';
import {
  AMQP_SHORTSTR_MAX_BYTES,
  FORWARD_AMQP_EXCHANGE,
  FORWARD_AMQP_ROUTING_KEY,
  FORWARD_MQTT_TOPIC,
  longestExpansion,
} from './forwarder.js';

/** What write-only values read back as, and what given back keeps them. */
export const MASK = '***';

const SCHEMES: Record<ForwardType, string[]> = {
  webhook: ['http:', 'https:'],
  mqtt: ['mqtt:', 'mqtts:'],
  amqp: ['amqp:', 'amqps:'],
};

/** A forward as the API takes it (null and absent alike). */
export interface ForwardInput {
  name: string;
  type: ForwardType | string;
  url: string;
  events?: string[] | null;
  group?: string | null;
  enabled?: boolean | null;
  topic?: string | null;
  exchange?: string | null;
  secret?: string | null;
}

export interface ForwardStatus {
  pending: number;
  lastDeliveredAt: string | null;
  lastError: string | null;
  dropped: number;
}

export type ForwardView = Forward & ForwardProgress & { pending: number };

export interface ForwardsService {
  list(p: Principal): Promise<ForwardView[]>;
  get(p: Principal, id: string): Promise<ForwardView>;
  create(p: Principal, input: ForwardInput): Promise<ForwardView>;
  /** Replaces the forward (fields left out take their defaults; "***" keeps a stored credential). */
  update(p: Principal, id: string, input: ForwardInput): Promise<ForwardView>;
  remove(p: Principal, id: string): Promise<void>;
}

export interface ForwardsDeps {
  db: Db;
  clock: Clock;
  /** where forwards may connect (TRACKGATE_FORWARD_ALLOW, the service's own listeners) */
  targets: ForwardTargets;
  /** after every change of the account's forwards (journal caches, delivery loops) */
  onChanged?: (accountId: string) => void;
}

const invalid = (field: string, message: string) =>
  new DomainError('VALIDATION_FAILED', `${field}: ${message}`, { field });

/** The URL with its password shown as "***". */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.password) return url;
    u.password = MASK;
    return u.toString();
  } catch {
    return url;
  }
}

/** The URL given, its "***" password replaced with the stored one when it still names the same server and user. */
function withStoredPassword(given: URL, stored: string | undefined): URL {
  if (decodeURIComponent(given.password) !== MASK) return given;
  // a stored URL that is not one (written before the checks) has no password to keep
  const s = stored && URL.canParse(stored) ? new URL(stored) : undefined;
  if (!s?.password || s.protocol !== given.protocol || s.host !== given.host || s.username !== given.username) {
    throw invalid(
      'url',
      'the password "***" stands for a stored one, which is kept only for the same scheme, server and user name: give the password again.',
    );
  }
  given.password = s.password;
  return given;
}

/**
 * The forward as stored, checked field by field; 400 naming the field otherwise. `stored`: a forward
 * already stored, checked before its delivery starts (storedForwardProblem): only what decides where
 * and how its messages go; a name or a secret of a length the API no longer takes, or an AMQP
 * template that only a device id longer than any stored could take past 255 bytes (the adapter
 * refuses a batch whose key is), deliver as they did.
 */
function check(
  input: ForwardInput,
  current?: Forward,
  stored = false,
): Omit<Forward, 'id' | 'accountId' | 'created' | 'modified'> {
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (!stored && (!name || name.length > 200)) throw invalid('name', 'must be 1 to 200 characters.');
  if (!FORWARD_TYPES.includes(input.type as ForwardType))
    throw invalid('type', `must be one of ${FORWARD_TYPES.join(', ')}.`);
  const type = input.type as ForwardType;
  if (typeof input.url !== 'string' || input.url.length > 2000)
    throw invalid('url', 'must be a URL of at most 2,000 characters.');
  let url: URL;
  try {
    url = new URL(input.url.trim());
  } catch {
    throw invalid('url', `"${maskUrl(input.url)}" is not a URL.`);
  }
  if (!SCHEMES[type].includes(url.protocol))
    throw invalid(
      'url',
      `a ${type} forward takes ${SCHEMES[type].map((x) => `${x}//`).join(' or ')} URLs, not ${url.protocol}//.`,
    );
  // URL parses "mqtt://" and "amqp:" (schemes it does not know) without a host, and the MQTT and AMQP clients then connect to localhost
  if (!url.hostname) throw invalid('url', `"${maskUrl(input.url)}" names no server: give its host name or address.`);
  if (url.port !== '' && !(Number(url.port) >= 1 && Number(url.port) <= 65535))
    throw invalid('url', `port ${url.port}: must be 1 to 65535.`);
  url = withStoredPassword(url, current?.url);
  const events = input.events ?? [...FORWARD_EVENT_KINDS];
  if (events.length === 0) throw invalid('events', 'name at least one of locations, alerts.');
  for (const [i, e] of events.entries())
    if (!FORWARD_EVENT_KINDS.includes(e as ForwardEventKind))
      throw invalid(`events[${i}]`, 'must be locations or alerts.');
  const topic = input.topic ?? null;
  if (topic !== null) {
    if (type === 'webhook' && !stored) throw invalid('topic', 'a webhook has no topic.');
    if (!topic.trim() || (topic.length > 500 && !stored)) throw invalid('topic', 'must be 1 to 500 characters.');
    if (type === 'mqtt' && /[+#\u0000]/.test(topic))
      throw invalid('topic', 'an MQTT topic to publish to cannot hold "+", "#" or NUL.');
  }
  if (type === 'amqp' && !stored) {
    // amqplib refuses a longer routing key at every publish: the forward would never deliver
    const longest = Buffer.byteLength(longestExpansion(topic ?? FORWARD_AMQP_ROUTING_KEY));
    if (longest > AMQP_SHORTSTR_MAX_BYTES) {
      throw invalid(
        'topic',
        `an AMQP routing key holds at most ${AMQP_SHORTSTR_MAX_BYTES} bytes, and this template makes ${longest} bytes of UTF-8 for a device id of ${DEVICE_ID_MAX_LENGTH} characters and the event "location".`,
      );
    }
  }
  const exchange = input.exchange ?? null;
  if (exchange !== null) {
    if (type !== 'amqp' && !stored) throw invalid('exchange', 'only an amqp forward has an exchange.');
    if (Buffer.byteLength(exchange) > AMQP_SHORTSTR_MAX_BYTES && (type === 'amqp' || !stored))
      throw invalid('exchange', `must be at most ${AMQP_SHORTSTR_MAX_BYTES} bytes of UTF-8.`);
  }
  let secret = input.secret ?? null;
  if (secret !== null) {
    if (type !== 'webhook' && !stored) throw invalid('secret', 'only a webhook signs its requests.');
    if (secret === MASK) {
      if (!current?.secret)
        throw invalid('secret', '"***" stands for a stored secret, and this forward has none: give the secret.');
      secret = current.secret;
    } else if (!stored && (secret.length < 16 || secret.length > 500))
      throw invalid('secret', 'must be 16 to 500 characters.');
  }
  return {
    name,
    type,
    url: url.toString(),
    events: [...new Set(events)] as ForwardEventKind[],
    groupId: input.group ?? null,
    enabled: input.enabled ?? true,
    topic: type === 'webhook' ? null : topic,
    exchange: type === 'amqp' ? exchange : null,
    secret,
  };
}

/** The URL's server refused as written (an address forwards may not reach, the service's own listener): 400 naming `url`. */
function refusedTarget(problem: string | null): DomainError | null {
  return problem === null ? null : invalid('url', `${problem}.`);
}

/**
 * Why the API would refuse the forward as stored (check's message, naming the field), or null when
 * it passes. A forward stored before a check existed (an upgraded database) or written in the
 * database directly can hold what the API refuses: the delivery loop asks this before it connects
 * (forward.runner.ts), and a change of such a forward clears the problem the loop recorded. With
 * `targets`, also a server refused as written (an address TRACKGATE_FORWARD_ALLOW no longer names);
 * a host name is checked when it is resolved, at each connect.
 */
export function storedForwardProblem(f: Forward, targets?: ForwardTargets): string | null {
  try {
    const fields = check(
      {
        name: f.name,
        type: f.type,
        url: f.url,
        events: f.events,
        group: f.groupId,
        enabled: f.enabled,
        topic: f.topic,
        exchange: f.exchange,
        secret: f.secret,
      },
      f,
      true,
    );
    const refused = targets ? refusedTarget(targets.refusedAsWritten(new URL(fields.url))) : null;
    if (refused) throw refused;
    return null;
  } catch (e) {
    // a value of a shape no check expected (events not a list) is refused too
    return e instanceof DomainError ? e.message : `not readable: ${(e as Error).message}`;
  }
}

/** A forward as the API shows it (docs/contract.md "Forwards"): credentials masked, defaults filled in. */
export function presentForward(f: ForwardView): Record<string, unknown> {
  const status: ForwardStatus = {
    pending: f.pending,
    lastDeliveredAt: f.lastDeliveredAt === null ? null : new Date(f.lastDeliveredAt).toISOString(),
    lastError: f.lastError,
    dropped: f.dropped,
  };
  return {
    id: f.id,
    name: f.name,
    type: f.type,
    url: maskUrl(f.url),
    events: f.events,
    ...(f.groupId && { group: f.groupId }),
    enabled: f.enabled,
    ...(f.type === 'mqtt' && { topic: f.topic ?? FORWARD_MQTT_TOPIC }),
    ...(f.type === 'amqp' && {
      topic: f.topic ?? FORWARD_AMQP_ROUTING_KEY,
      exchange: f.exchange ?? FORWARD_AMQP_EXCHANGE,
    }),
    ...(f.secret && { secret: MASK }),
    status,
  };
}

export function createForwardsService(deps: ForwardsDeps): ForwardsService {
  return {
    list: (p) => listForwards(deps, p),
    get: (p, id) => getForward(deps, p, id),
    create: (p, input) => createForward(deps, p, input),
    update: (p, id, input) => updateForward(deps, p, id, input),
    remove: (p, id) => removeForward(deps, p, id),
  };
}

function requireForwardsAdmin(p: Principal): void {
  requirePrivilege(p, 'admin');
  if (p.groupId)
    throw new DomainError(
      'FORBIDDEN',
      "A user restricted to a group cannot manage forwards: they carry the whole account's data.",
    );
}

async function view(db: Db, f: Forward & ForwardProgress): Promise<ForwardView> {
  return { ...f, pending: f.enabled ? await repo.pendingCount(db, f, f.cursor) : 0 };
}

/** The principal's forward `id`, or FORWARD_NOT_FOUND. */
async function own(db: Db, p: Principal, id: string): Promise<Forward & ForwardProgress> {
  requireForwardsAdmin(p);
  const f = await repo.findById(db, id);
  if (!f || f.accountId !== p.accountId) throw notFound('FORWARD_NOT_FOUND', `Forward "${id}"`);
  return f;
}

/** Where the URL connects, its host name resolved now (and again at each connect). */
async function checkTarget(targets: ForwardTargets, url: string): Promise<void> {
  const refused = refusedTarget(await targets.problem(new URL(url)));
  if (refused) throw refused;
}

async function checkGroup(db: Db, p: Principal, groupId: string | null): Promise<void> {
  if (!groupId) return;
  const g = await groups.findById(db, groupId);
  if (!g || g.accountId !== p.accountId) throw invalid('group', `there is no group "${groupId}" in your account.`);
}

async function listForwards({ db }: ForwardsDeps, p: Principal): Promise<ForwardView[]> {
  requireForwardsAdmin(p);
  return Promise.all((await repo.listByAccount(db, p.accountId)).map((f) => view(db, f)));
}

async function getForward({ db }: ForwardsDeps, p: Principal, id: string): Promise<ForwardView> {
  return view(db, await own(db, p, id));
}

async function createForward(deps: ForwardsDeps, p: Principal, input: ForwardInput): Promise<ForwardView> {
  const { db, clock } = deps;
  requireForwardsAdmin(p);
  const fields = check(input);
  await checkGroup(db, p, fields.groupId);
  await checkTarget(deps.targets, fields.url);
  const t = clock.now().getTime();
  const forward: Forward = { id: randomUUID(), accountId: p.accountId, ...fields, created: t, modified: t };
  // before too: an ingest transaction that starts once this one commits must already journal the account
  deps.onChanged?.(p.accountId);
  await db.transaction(async (trx) => {
    // from the end of the stream: what is stored from now on
    await repo.lockStreams(trx, [p.accountId]);
    await repo.insert(trx, forward, await repo.streamEnd(trx, p.accountId));
  });
  deps.onChanged?.(p.accountId);
  return getForward(deps, p, forward.id);
}

async function updateForward(deps: ForwardsDeps, p: Principal, id: string, input: ForwardInput): Promise<ForwardView> {
  const { db, clock } = deps;
  const current = await own(db, p, id);
  const fields = check(input, current);
  await checkGroup(db, p, fields.groupId);
  await checkTarget(deps.targets, fields.url);
  // modified moves on at every change: the delivery loop starts again with the new settings
  const forward: Forward = { ...current, ...fields, modified: Math.max(clock.now().getTime(), current.modified + 1) };
  if (forward.enabled && !current.enabled) deps.onChanged?.(p.accountId);
  // the status said what was wrong with the settings stored (the delivery loop did not start): corrected now
  const corrected = storedForwardProblem(current, deps.targets) !== null;
  await db.transaction(async (trx) => {
    if (forward.enabled && !current.enabled) {
      await repo.lockStreams(trx, [p.accountId]);
      await repo.update(trx, forward, await repo.streamEnd(trx, p.accountId));
    } else await repo.update(trx, forward, undefined, corrected);
  });
  deps.onChanged?.(p.accountId);
  return getForward(deps, p, id);
}

async function removeForward(deps: ForwardsDeps, p: Principal, id: string): Promise<void> {
  await own(deps.db, p, id);
  await repo.remove(deps.db, id);
  deps.onChanged?.(p.accountId);
}
