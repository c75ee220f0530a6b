/**
 * The token endpoint's rules (CONTRACT.md "Token"): valid credentials give a JWT whose `exp` is
 * the `expires` returned; anything else is one indistinguishable failure. Each token carries the
 * user's key version, so issuing a new API key revokes every token made with the old one.
 */
import jwt from 'jsonwebtoken';
import { createSecretKey, type KeyObject } from 'node:crypto';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Principal } from '../model/user.js';
import { DomainError } from '../errors.js';
import * as users from '../users/users.repository.js';
import { apiKeyMatches } from './secrets.js';
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

export interface TokensDeps {
  db: Db;
  clock: Clock;
  secret: string;
  ttlSeconds: number;
  failedLogins: FailedLoginLimiter;
}

/** Principals are cached briefly: the hot path (every request) must not hit the database. */
const PRINCIPAL_TTL_MS = 1000;

export function createTokensService(deps: TokensDeps) {
  const { db, clock, ttlSeconds, failedLogins } = deps;
  // A KeyObject, built once: given a string, jsonwebtoken first tries to parse it as a PEM key on
  // every sign and verify (about 330 µs each, against 7 µs).
  const secret: KeyObject = createSecretKey(Buffer.from(deps.secret, 'utf8'));
  const cache = new Map<string, { at: number; keyVersion: number; principal: Principal | null }>();

  async function issue(userName: string, apiKey: string, remoteAddress: string): Promise<IssuedToken> {
    const keys = [`user:${userName.toLowerCase()}`, `ip:${remoteAddress}`];
    const retryAfter = await failedLogins.blockedFor(keys);
    if (retryAfter > 0) {
      throw new DomainError('RATE_LIMITED', 'Too many failed token requests; try again later.', { retryAfterSeconds: retryAfter });
    }
    const user = await users.findByUserName(db, userName);
    const nowMs = clock.now().getTime();
    const ok = user !== undefined && apiKeyMatches(apiKey, user.apiKeyHash) && !user.disabled
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
    if (!user || user.disabled || (user.expiresAt !== null && user.expiresAt <= nowMs) || !apiKeyMatches(apiKey, user.apiKeyHash)) return null;
    return { userId: user.id, accountId: user.accountId, userName: user.userName, privileges: new Set(user.privileges), groupId: user.groupId };
  }

  /** Verifies a token outside HTTP (MQTT password = token). */
  async function principalForToken(token: string): Promise<Principal | null> {
    try {
      const claims = jwt.verify(token, secret, { algorithms: ['HS256'], clockTimestamp: Math.floor(clock.now().getTime() / 1000) }) as TokenClaims;
      return await principalFor(claims);
    } catch {
      return null;
    }
  }

  return { issue, principalFor, forget, principalForApiKey, principalForToken, secret };
}

export type TokensService = ReturnType<typeof createTokensService>;
