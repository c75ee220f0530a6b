/**
 * The token endpoint's rules (CONTRACT.md "Token"): valid credentials give a JWT whose `exp` is
 * the `expires` returned; anything else is one indistinguishable failure. Each token carries the
 * user's key version, so issuing a new API key revokes every token made with the old one.
 */
import jwt from 'jsonwebtoken';
import { createHash, createSecretKey, type KeyObject } from 'node:crypto';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Principal } from '../model/user.js';
import { DomainError } from '../errors.js';
import * as users from '../users/users.repository.js';
import { apiKeyMatches, generateApiKey, hashApiKey } from './secrets.js';
import type { FailedLoginLimiter } from '../quota/rate-limiter.js';

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
  secret: string;
  ttlSeconds: number;
  failedLogins: FailedLoginLimiter;
  /** how a presented key is checked against a stored digest (default apiKeyMatches); tests count its calls */
  keyMatches?: (apiKey: string, storedHash: string) => boolean;
}

/** Principals are cached briefly: the hot path (every request) must not hit the database. */
const PRINCIPAL_TTL_MS = 1000;

export function createTokensService(deps: TokensDeps) {
  const { db, clock, ttlSeconds, failedLogins } = deps;
  const keyMatches = deps.keyMatches ?? apiKeyMatches;
  // A KeyObject, built once: given a string, jsonwebtoken first tries to parse it as a PEM key on
  // every sign and verify (about 330 µs each, against 7 µs).
  const secret: KeyObject = createSecretKey(Buffer.from(deps.secret, 'utf8'));
  const cache = new Map<string, { at: number; keyVersion: number; principal: Principal | null }>();

  async function issue(userName: string, apiKey: string, remoteAddress: string): Promise<IssuedToken> {
    if (userName.length > USER_NAME_MAX || apiKey.length > API_KEY_MAX) {
      throw new DomainError('VALIDATION_FAILED', `userName may have at most ${USER_NAME_MAX} characters and apiKey at most ${API_KEY_MAX}.`);
    }
    const keys = failedLoginKeys(userName, remoteAddress);
    const retryAfter = await failedLogins.blockedFor(keys);
    if (retryAfter > 0) {
      throw new DomainError('RATE_LIMITED', 'Too many failed token requests from your address; try again later.', { retryAfterSeconds: retryAfter });
    }
    const user = await users.findByUserName(db, userName);
    const nowMs = clock.now().getTime();
    // The key is checked whether or not the user exists (against a dummy digest if not), and
    // before the other conditions: the same work for every failure.
    const keyOk = keyMatches(apiKey, user?.apiKeyHash ?? DUMMY_KEY_HASH);
    const ok = user !== undefined && keyOk && !user.disabled
      && (user.expiresAt === null || user.expiresAt > nowMs) && (user.fromAt === null || user.fromAt <= nowMs);
    if (!ok || !user) {
      await failedLogins.recordFailure(keys);
      throw new DomainError('INVALID_CREDENTIALS', INVALID);
    }
    const iat = Math.floor(nowMs / 1000);
    const exp = iat + ttlSeconds;
    const claims: TokenClaims = { sub: user.id, acc: user.accountId, kv: user.keyVersion, iat, exp };
    const token = jwt.sign(claims, secret, { algorithm: 'HS256', noTimestamp: true });
    await users.touchLastLogin(db, user.id, nowMs);
    return { token, expires: new Date(exp * 1000).toISOString() };
  }

  /**
   * The principal a verified token speaks for, or null when the token was revoked (new API key),
   * the user was deleted, disabled or expired.
   */
  async function principalFor(claims: TokenClaims): Promise<Principal | null> {
    const nowMs = clock.now().getTime();
    const hit = cache.get(claims.sub);
    if (hit && nowMs - hit.at < PRINCIPAL_TTL_MS) return hit.keyVersion === claims.kv ? hit.principal : null;
    const user = await users.findById(db, claims.sub);
    const usable = user && !user.disabled && (user.expiresAt === null || user.expiresAt > nowMs);
    const principal: Principal | null = usable
      ? { userId: user.id, accountId: user.accountId, userName: user.userName, privileges: new Set(user.privileges), groupId: user.groupId }
      : null;
    if (cache.size > 100_000) cache.clear();
    cache.set(claims.sub, { at: nowMs, keyVersion: user?.keyVersion ?? -1, principal });
    return user?.keyVersion === claims.kv ? principal : null;
  }

  /** Forgets a cached user at once (its key, privileges or group changed). */
  function forget(userId: string): void {
    cache.delete(userId);
  }

  /** For API users logging into MQTT with their API key. */
  async function principalForApiKey(userName: string, apiKey: string): Promise<Principal | null> {
    const user = await users.findByUserName(db, userName);
    const nowMs = clock.now().getTime();
    const keyOk = keyMatches(apiKey, user?.apiKeyHash ?? DUMMY_KEY_HASH);
    if (!user || !keyOk || user.disabled || (user.expiresAt !== null && user.expiresAt <= nowMs)) return null;
    // No privilege is no access, over MQTT as over REST.
    if (user.privileges.length === 0) return null;
    return { userId: user.id, accountId: user.accountId, userName: user.userName, privileges: new Set(user.privileges), groupId: user.groupId };
  }

  /** Verifies a token outside HTTP (MQTT password = token). */
  async function principalForToken(token: string): Promise<Principal | null> {
    try {
      const claims = jwt.verify(token, secret, { algorithms: ['HS256'], clockTimestamp: Math.floor(clock.now().getTime() / 1000) }) as TokenClaims;
      const principal = await principalFor(claims);
      return principal && principal.privileges.size > 0 ? principal : null;
    } catch {
      return null;
    }
  }

  return { issue, principalFor, forget, principalForApiKey, principalForToken, secret };
}

export type TokensService = ReturnType<typeof createTokensService>;
