/**
 * The HS256 secrets tokens are signed and checked with, shared by every instance on one database
 * (settings `jwt_secret`). An instance started with TRACKGATE_JWT_SECRET stores it there when it
 * differs from the stored one: from then on every instance signs with it (each reads the stored
 * secret again at most SIGNING_READ_MS after its last read, and at once when a token's signature
 * matches none it knows). The secret it replaced stays accepted (`jwt_secret_previous`) until
 * every token signed with it has expired, so no client is logged out by the change.
 * Before, an instance with the variable signed with it and one without with the stored secret:
 * each refused the other's tokens (401 INVALID_TOKEN), with nothing logged.
 */
import { createSecretKey, type KeyObject } from 'node:crypto';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import * as settings from '../settings/settings.repository.js';
import { describeStorageError, isStorageUnavailable } from '../db/storage-errors.js';
import { randomSecret } from '../secrets.js';

const CURRENT = 'jwt_secret';
const PREVIOUS = 'jwt_secret_previous';
/** how long a signing instance may go on with the secret it read last (another instance may have replaced it) */
export const SIGNING_READ_MS = 5000;
/** a token whose signature matches no known secret reads the stored ones again, at most this often */
const REFRESH_EVERY_MS = 1000;
/** beyond a token's lifetime, how long a replaced secret stays accepted: SIGNING_READ_MS and clocks a little apart */
const PREVIOUS_MARGIN_MS = 60_000;
/** replaced secrets kept at most (each accepted only until its `until`) */
const PREVIOUS_MAX = 8;

interface Previous {
  secret: string;
  /** ms since the epoch: tokens signed with it are accepted until then */
  until: number;
}

/** The secrets a tokens service signs and checks with. */
export interface TokenSecrets {
  /** the secret new tokens are signed with */
  signing(): Promise<KeyObject>;
  /** every secret a token of this service may be signed with now */
  verifying(): readonly KeyObject[];
  /** reads the stored secrets again (at most once a second: a call sooner waits for the next read); true when that made a secret known that was not */
  refresh(): Promise<boolean>;
}

/**
 * A KeyObject, built once per secret: given a string, jsonwebtoken first tries to parse it as a
 * PEM key on every sign and verify (about 330 µs each, against 7 µs).
 */
const keyOf = (secret: string): KeyObject => createSecretKey(Buffer.from(secret, 'utf8'));

/** One secret, never replaced (unit tests; a process without a database). */
export function fixedTokenSecret(secret: string): TokenSecrets {
  const key = keyOf(secret);
  return { signing: async () => key, verifying: () => [key], refresh: async () => false };
}

function parsePrevious(raw: string | undefined): Previous[] {
  try {
    const list = JSON.parse(raw ?? '[]') as unknown;
    return Array.isArray(list)
      ? list.filter((p): p is Previous => typeof p?.secret === 'string' && typeof p?.until === 'number')
      : [];
  } catch {
    return [];
  }
}

export interface TokenSecretsOptions {
  db: Db;
  clock: Clock;
  logger: Logger;
  /** TRACKGATE_JWT_SECRET, when set */
  configured?: string;
  /** the tokens' lifetime: how long a replaced secret must stay accepted */
  ttlSeconds: number;
}

/**
 * The stored secret, made at the first start; TRACKGATE_JWT_SECRET replaces it when set and
 * different. A database that refuses writes (a full disk) signs this run's first tokens with the
 * configured (or a new) secret, said at warn; a stored one, once read, takes over.
 */
async function startingSecret(o: TokenSecretsOptions): Promise<string> {
  const { db, logger, configured } = o;
  try {
    if (configured === undefined) return await settings.setIfAbsent(db, CURRENT, randomSecret());
    const stored = await settings.get(db, CURRENT);
    if (stored === configured) return configured;
    const now = o.clock.now().getTime();
    const until = now + o.ttlSeconds * 1000 + PREVIOUS_MARGIN_MS;
    await db.transaction(async (trx) => {
      const previous = parsePrevious(await settings.get(trx, PREVIOUS)).filter(
        (p) => p.until > now && p.secret !== configured && p.secret !== stored,
      );
      if (stored !== undefined) previous.push({ secret: stored, until });
      await settings.put(trx, PREVIOUS, JSON.stringify(previous.slice(-PREVIOUS_MAX)));
      await settings.put(trx, CURRENT, configured);
    });
    if (stored !== undefined) {
      logger.warn(
        { variable: 'TRACKGATE_JWT_SECRET', previousAcceptedUntil: new Date(until).toISOString() },
        "TRACKGATE_JWT_SECRET differs from the token secret stored in the database (generated, or another instance's TRACKGATE_JWT_SECRET): it replaces it for every instance on this database; tokens signed with the one replaced are accepted until they expire",
      );
    }
    return configured;
  } catch (e) {
    if (!isStorageUnavailable(e)) throw e;
    // a stored secret, once it can be read, is what every instance signs with (openTokenSecrets reads it again)
    logger.warn(
      { err: describeStorageError(e) },
      'the token secret cannot be stored (storage refuses writes): tokens issued until the next start may be refused by other instances and after it',
    );
    return configured ?? randomSecret();
  }
}

/** The shared secrets of the instances on `o.db` (see the file's comment). */
export async function openTokenSecrets(o: TokenSecretsOptions): Promise<TokenSecrets> {
  let current = await startingSecret(o);
  let previous: Previous[] = [];
  /** secrets this instance signed with, and until when its tokens of each may be presented */
  const signed = new Map<string, number>();
  const keys = new Map<string, KeyObject>();
  const key = (secret: string) => {
    let k = keys.get(secret);
    if (!k) keys.set(secret, (k = keyOf(secret)));
    return k;
  };
  let readAt = 0;
  let refreshing: Promise<boolean> | undefined;

  function known(now: number): string[] {
    const all = new Set([current, ...previous.filter((p) => p.until > now).map((p) => p.secret)]);
    for (const [secret, until] of signed) {
      if (until > now) all.add(secret);
      else signed.delete(secret);
    }
    for (const secret of keys.keys()) if (!all.has(secret)) keys.delete(secret);
    return [...all];
  }

  async function read(): Promise<boolean> {
    const now = o.clock.now().getTime();
    const before = new Set(known(now));
    try {
      const [stored, rawPrevious] = await Promise.all([settings.get(o.db, CURRENT), settings.get(o.db, PREVIOUS)]);
      if (stored !== undefined) current = stored;
      previous = parsePrevious(rawPrevious);
    } catch (e) {
      // storage does not answer: the secrets known so far go on
      o.logger.debug({ err: (e as Error).message }, 'the stored token secrets could not be read');
    }
    readAt = performance.now();
    return known(now).some((s) => !before.has(s));
  }

  /** One read at a time, at most one a REFRESH_EVERY_MS: a token that came sooner waits for the next (a valid one from another instance must not be refused meanwhile). */
  function refresh(): Promise<boolean> {
    if (refreshing) return refreshing;
    const wait = REFRESH_EVERY_MS - (performance.now() - readAt);
    const due = wait > 0 ? new Promise<void>((r) => setTimeout(r, wait)) : Promise.resolve();
    refreshing = due.then(read).finally(() => (refreshing = undefined));
    return refreshing;
  }

  // the secrets replaced before (by this start or another instance's), and a current one stored by another instance meanwhile
  await read();
  return {
    async signing() {
      if (performance.now() - readAt >= SIGNING_READ_MS) await refresh();
      signed.set(current, o.clock.now().getTime() + o.ttlSeconds * 1000);
      return key(current);
    },
    verifying: () => known(o.clock.now().getTime()).map(key),
    refresh,
  };
}
