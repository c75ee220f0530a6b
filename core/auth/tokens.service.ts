/**
 * The token endpoint's rules (docs/contract.md "Token"): valid credentials give a JWT whose `exp` is
 * the `expires` returned; anything else is one indistinguishable failure. Each token carries the
 * user's key version, so issuing a new API key revokes every token made with the old one.
 * `verify` is the one token verifier: the REST guard (api/app.ts) and MQTT logins (password = token)
 * both ask it; the REST 401 is worded from the reason it gives.
 */
import jwt from 'jsonwebtoken';
import { createHash, type KeyObject } from 'node:crypto';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Principal, UserRecord } from '../model/user.js';
import { DomainError } from '../errors.js';
import * as users from '../users/users.repository.js';
import { isStorageUnavailable } from '../db/storage-errors.js';
import { apiKeyMatches, generateApiKey, hashApiKey } from '../secrets.js';
import type { FailedLoginLimiter } from '../quota/rate-limiter.js';
import { fixedTokenSecret, type TokenSecrets } from './token-secrets.js';

export interface TokenClaims {
  sub: string;
  acc: string;
  kv: number;
  iat: number;
  exp: number;
}

export interface IssuedToken {
  token: string;
  expires: string;
}

const INVALID = 'Invalid userName or apiKey.';

/** Longest user name the token endpoint takes: a user name defaults to an e-mail address (≤ 320). */
export const USER_NAME_MAX = 320;
/** Longest API key it takes (generated keys have 46 characters; configured ones at least 16). */
export const API_KEY_MAX = 4096;

/**
 * Compared against when the user name is unknown, so that an unknown name costs the same digest
 * and comparison as a wrong key: the answer's timing does not tell which user names exist.
 */
const DUMMY_KEY_HASH = hashApiKey(generateApiKey());

/**
 * The failed-request counters' keys: per address, and per (user name, address). A counter per user
 * name alone would let anyone lock a user out by failing in its name; API keys are 256-bit random,
 * so guessing one from many addresses gets nowhere. The name is digested: keys stay short, however
 * long the name someone sends.
 */
export function failedLoginKeys(userName: string, remoteAddress: string): string[] {
  const name = createHash('sha256').update(userName.toLowerCase(), 'utf8').digest('base64url').slice(0, 22);
  return [`ip:${remoteAddress}`, `user-ip:${name}:${remoteAddress}`];
}

export interface TokensDeps {
  db: Db;
  clock: Clock;
  /** one secret, or the secrets the instances on one database share (core/auth/token-secrets.ts) */
  secret: string | TokenSecrets;
  ttlSeconds: number;
  failedLogins: FailedLoginLimiter;
  /** how a presented key is checked against a stored digest (default apiKeyMatches); tests count its calls */
  keyMatches?: (apiKey: string, storedHash: string) => boolean;
}

/** Principals are cached briefly: the hot path (every request) must not hit the database. */
const PRINCIPAL_TTL_MS = 1000;
/** Tokens whose signature was checked, by their exact text; cleared when this many are held. */
const VERIFIED_MAX = 50_000;

/** Why a token was refused: callers word their answer from this, never from a library's message. */
export type TokenFailure = 'missing' | 'invalid' | 'expired' | 'revoked';

export type TokenCheck = { ok: true; principal: Principal; claims: TokenClaims } | { ok: false; reason: TokenFailure };

const REFUSED: Record<TokenFailure, TokenCheck> = {
  missing: Object.freeze({ ok: false, reason: 'missing' }),
  invalid: Object.freeze({ ok: false, reason: 'invalid' }),
  expired: Object.freeze({ ok: false, reason: 'expired' }),
  revoked: Object.freeze({ ok: false, reason: 'revoked' }),
};

/** Our tokens always carry these claims (issue below); a payload without them was not made here. */
function isTokenClaims(payload: unknown): payload is TokenClaims {
  const c = payload as Partial<TokenClaims> | null;
  return (
    typeof c === 'object' &&
    c !== null &&
    typeof c.sub === 'string' &&
    typeof c.acc === 'string' &&
    Number.isInteger(c.kv) &&
    typeof c.exp === 'number'
  );
}

/** A user may log in (token, API key) only while enabled and inside its `from`..`expires` window. */
function usable(user: UserRecord, nowMs: number): boolean {
  return (
    !user.disabled &&
    (user.expiresAt === null || user.expiresAt > nowMs) &&
    (user.fromAt === null || user.fromAt <= nowMs)
  );
}

const principalOf = (user: UserRecord): Principal => ({
  userId: user.id,
  accountId: user.accountId,
  userName: user.userName,
  privileges: new Set(user.privileges),
  groupId: user.groupId,
});

/** Issues and checks tokens; the one place that says who a token or an API key speaks for. */
export interface TokensService {
  /** The token endpoint: a JWT for valid credentials; INVALID_CREDENTIALS, or RATE_LIMITED after repeated failures. */
  issue(userName: string, apiKey: string, remoteAddress: string): Promise<IssuedToken>;
  /** The one token verifier (REST bearer tokens, MQTT passwords): signature, expiry, then revocation. */
  verify(token: string): Promise<TokenCheck>;
  /** Forgets a cached user at once (its key, privileges or group changed). */
  forget(userId: string): void;
  /** For API users logging into MQTT with their API key; null when refused or without privileges. */
  principalForApiKey(userName: string, apiKey: string): Promise<Principal | null>;
  /** For MQTT logins whose password is a token; null when refused or without privileges. */
  principalForToken(token: string): Promise<Principal | null>;
}

export function createTokensService(deps: TokensDeps): TokensService {
  const { db, clock, ttlSeconds, failedLogins } = deps;
  const keyMatches = deps.keyMatches ?? apiKeyMatches;
  const secrets = typeof deps.secret === 'string' ? fixedTokenSecret(deps.secret) : deps.secret;
  const { principalFor, forget } = principalCache(db);
  // A token verified once is remembered by its exact text (a forged token is another text), so
  // the request path does not check the signature again; expiry and revocation are checked each time.
  const verified = new Map<string, TokenClaims>();

  /**
   * The user whose name and API key these are, if it may log in now. The key is checked whether or
   * not the user exists (against a dummy digest if not), and before the other conditions: the same
   * work for every failure.
   */
  async function loginUser(userName: string, apiKey: string): Promise<{ user: UserRecord | undefined; nowMs: number }> {
    const user = await users.findByUserName(db, userName);
    const nowMs = clock.now().getTime();
    const keyOk = keyMatches(apiKey, user?.apiKeyHash ?? DUMMY_KEY_HASH);
    return { user: user && keyOk && usable(user, nowMs) ? user : undefined, nowMs };
  }

  async function issue(userName: string, apiKey: string, remoteAddress: string): Promise<IssuedToken> {
    const keys = await admitted(failedLogins, userName, apiKey, remoteAddress);
    const { user, nowMs } = await loginUser(userName, apiKey);
    if (!user) {
      await failedLogins.recordFailure(keys);
      throw new DomainError('INVALID_CREDENTIALS', INVALID);
    }
    const iat = Math.floor(nowMs / 1000);
    const exp = iat + ttlSeconds;
    const claims: TokenClaims = { sub: user.id, acc: user.accountId, kv: user.keyVersion, iat, exp };
    const token = jwt.sign(claims, await secrets.signing(), { algorithm: 'HS256', noTimestamp: true });
    // bookkeeping: a database that refuses writes (a full disk) still issues tokens, so reads go on
    await users.touchLastLogin(db, user.id, nowMs).catch((e: unknown) => {
      if (!isStorageUnavailable(e)) throw e;
    });
    return { token, expires: new Date(exp * 1000).toISOString() };
  }

  /**
   * The one token verifier, for REST bearer tokens and MQTT passwords alike: the signature (HS256,
   * a secret of the instances on this database), `exp` against the injected clock, then revocation through the user (key version,
   * disabled, deleted, outside its window). The principal may have no privilege: callers refuse it
   * as they word it (403 over REST). A storage failure is thrown, not answered as a bad token.
   */
  async function verify(token: string): Promise<TokenCheck> {
    if (!token) return REFUSED.missing;
    const nowMs = clock.now().getTime();
    let claims = verified.get(token);
    if (claims === undefined) {
      const checked = await checkSignature(secrets, token, nowMs);
      if (typeof checked === 'string') return REFUSED[checked];
      claims = checked;
      if (verified.size >= VERIFIED_MAX) verified.clear();
      verified.set(token, claims);
    } else if (claims.exp * 1000 <= nowMs) {
      // the same bound as jsonwebtoken's: expired from the second `exp` names
      verified.delete(token);
      return REFUSED.expired;
    }
    const principal = await principalFor(claims, nowMs);
    return principal ? { ok: true, principal, claims } : REFUSED.revoked;
  }

  /** For API users logging into MQTT with their API key. */
  async function principalForApiKey(userName: string, apiKey: string): Promise<Principal | null> {
    const { user } = await loginUser(userName, apiKey);
    // No privilege is no access, over MQTT as over REST.
    return user && user.privileges.length > 0 ? principalOf(user) : null;
  }

  /** MQTT password = token: the same verifier as REST; a user without privileges may not log in. */
  async function principalForToken(token: string): Promise<Principal | null> {
    const checked = await verify(token);
    return checked.ok && checked.principal.privileges.size > 0 ? checked.principal : null;
  }

  return { issue, verify, forget, principalForApiKey, principalForToken };
}

/** The principals of users, each read at most once a PRINCIPAL_TTL_MS (by user id). */
function principalCache(db: Db): {
  principalFor(claims: TokenClaims, nowMs: number): Promise<Principal | null>;
  forget(userId: string): void;
} {
  const cache = new Map<string, { at: number; keyVersion: number; principal: Principal | null }>();

  /**
   * The principal a token with a valid signature speaks for, or null when the token was revoked
   * (new API key), the user was deleted, disabled or is outside its `from`..`expires` window.
   */
  async function principalFor(claims: TokenClaims, nowMs: number): Promise<Principal | null> {
    const hit = cache.get(claims.sub);
    if (hit && nowMs - hit.at < PRINCIPAL_TTL_MS) return hit.keyVersion === claims.kv ? hit.principal : null;
    const user = await users.findById(db, claims.sub);
    const principal = user && usable(user, nowMs) ? principalOf(user) : null;
    if (cache.size > 100_000) cache.clear();
    cache.set(claims.sub, { at: nowMs, keyVersion: user?.keyVersion ?? -1, principal });
    return user?.keyVersion === claims.kv ? principal : null;
  }

  /** Forgets a cached user at once (its key, privileges or group changed). */
  function forget(userId: string): void {
    cache.delete(userId);
  }

  return { principalFor, forget };
}

/** The claims of a token signed with `key` by HS256 (no other algorithm), not expired at nowMs; 'signature' when another key signed it. */
function checkWith(token: string, key: KeyObject, nowMs: number): TokenClaims | 'invalid' | 'expired' | 'signature' {
  try {
    const payload = jwt.verify(token, key, { algorithms: ['HS256'], clockTimestamp: Math.floor(nowMs / 1000) });
    return isTokenClaims(payload) ? payload : 'invalid';
  } catch (e) {
    // jsonwebtoken checks the signature before `exp`: an expired token is one we signed.
    if (e instanceof jwt.TokenExpiredError) return 'expired';
    return e instanceof jwt.JsonWebTokenError && e.message === 'invalid signature' ? 'signature' : 'invalid';
  }
}

/**
 * The claims of a token signed with one of the secrets of the instances on this database. A
 * well-formed HS256 token that none of the known secrets signed reads them again (another
 * instance may have just replaced the shared one); anything else costs no read.
 */
async function checkSignature(
  secrets: TokenSecrets,
  token: string,
  nowMs: number,
): Promise<TokenClaims | 'invalid' | 'expired'> {
  const tryAll = (): TokenClaims | 'invalid' | 'expired' | 'signature' => {
    for (const key of secrets.verifying()) {
      const r = checkWith(token, key, nowMs);
      if (r !== 'signature') return r;
    }
    return 'signature';
  };
  let r = tryAll();
  if (r === 'signature' && (await secrets.refresh())) r = tryAll();
  return r === 'signature' ? 'invalid' : r;
}

/** A token request's credentials within their lengths and not blocked after failures: its failed-request counters' keys. */
async function admitted(
  failedLogins: FailedLoginLimiter,
  userName: string,
  apiKey: string,
  remoteAddress: string,
): Promise<string[]> {
  if (userName.length > USER_NAME_MAX || apiKey.length > API_KEY_MAX) {
    throw new DomainError(
      'VALIDATION_FAILED',
      `userName may have at most ${USER_NAME_MAX} characters and apiKey at most ${API_KEY_MAX}.`,
    );
  }
  const keys = failedLoginKeys(userName, remoteAddress);
  const retryAfter = await failedLogins.blockedFor(keys);
  if (retryAfter > 0) {
    throw new DomainError('RATE_LIMITED', 'Too many failed token requests from your address; try again later.', {
      retryAfterSeconds: retryAfter,
    });
  }
  return keys;
}
