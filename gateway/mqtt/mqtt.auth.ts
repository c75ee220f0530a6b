/**
 * Who an MQTT client is (CONTRACT.md §3 "MQTT"): a device (user name = device id, password = its
 * MQTT password) or an API user (user name = userName, password = API key or a valid token).
 *
 * CONNACK return codes (MQTT 3.1.1 §3.2.2.3):
 * - 2 identifier rejected: the client id does not start with the user name (one device must not
 *   take over another's session), or it is held by another identity;
 * - 4 bad user name or password: no such device or user, or the password does not match;
 * - 5 not authorized: the device is expired, or too many failed logins for this user name from
 *   this address (10 in 5 minutes).
 * (1 unacceptable protocol version is aedes' own answer to MQTT 5: see mqtt.gateway.ts.)
 */
import type { DeviceDirectory } from '../../core/devices/device-directory.js';
import type { TokensService } from '../../core/auth/tokens.service.js';
import type { Principal } from '../../core/model/user.js';
import type { Clock } from '../../core/clock.js';
import { devicePasswordMatches } from '../../core/auth/secrets.js';

export type Identity =
  | { kind: 'device'; deviceId: string; accountId: string; passwordHash: string }
  | {
      kind: 'user';
      principal: Principal;
      /** kept to re-check the user while it stays connected (disabled, deleted, new key) */
      credential: { type: 'apiKey'; apiKey: string } | { type: 'token'; token: string };
      /** a token login ends with the token */
      expiresAtMs: number | null;
    };

export type AuthResult = { ok: true; identity: Identity } | { ok: false; returnCode: 2 | 4 | 5; reason: string };

export const PROTOCOL = 'mqtt';

const FAILURES_ALLOWED = 10;
const FAILURE_WINDOW_MS = 5 * 60_000;

const looksLikeJwt = (s: string): boolean => /^eyJ[\w-]*\.[\w-]+\.[\w-]+$/.test(s);
const looksLikeApiKey = (s: string): boolean => s.startsWith('tg_');

/** `exp` of a token already verified by the tokens service, in epoch ms. */
function tokenExpiry(token: string): number | null {
  try {
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' ? claims.exp * 1000 : null;
  } catch {
    return null;
  }
}

/**
 * The client id rule: it starts with the user name. OwnTracks' Android default client id is
 * `(username + deviceId)` with `\W` removed, lower-cased; that form is accepted too.
 */
export function clientIdFits(clientId: string, userName: string): boolean {
  if (clientId.startsWith(userName)) return true;
  const folded = userName.replace(/\W/g, '').toLowerCase();
  return folded.length > 0 && clientId.startsWith(folded);
}

export interface AuthDeps {
  directory: DeviceDirectory;
  tokens: TokensService;
  clock: Clock;
}

export function createAuthenticator(deps: AuthDeps) {
  const { directory, tokens, clock } = deps;
  const failures = new Map<string, { count: number; since: number }>();
  /**
   * client id -> the identity that first used it in this process, so one identity cannot take
   * over another's session even where one user name is a prefix of another ("12" and "123")
   */
  const holders = new Map<string, string>();

  const holderKey = (i: Identity): string => (i.kind === 'device' ? `d:${i.deviceId}` : `u:${i.principal.userId}`);

  function blocked(key: string): boolean {
    const f = failures.get(key);
    if (!f) return false;
    if (clock.now().getTime() - f.since > FAILURE_WINDOW_MS) {
      failures.delete(key);
      return false;
    }
    return f.count >= FAILURES_ALLOWED;
  }

  function fail(key: string): void {
    const now = clock.now().getTime();
    const f = failures.get(key);
    if (f && now - f.since <= FAILURE_WINDOW_MS) f.count++;
    else {
      if (failures.size > 50_000) failures.clear();
      failures.set(key, { count: 1, since: now });
    }
  }

  async function asUser(userName: string, password: string): Promise<Identity | null> {
    if (looksLikeJwt(password)) {
      const principal = await tokens.principalForToken(password);
      if (!principal || principal.userName.toLowerCase() !== userName.toLowerCase()) return null;
      return { kind: 'user', principal, credential: { type: 'token', token: password }, expiresAtMs: tokenExpiry(password) };
    }
    const principal = await tokens.principalForApiKey(userName, password);
    return principal ? { kind: 'user', principal, credential: { type: 'apiKey', apiKey: password }, expiresAtMs: null } : null;
  }

  /**
   * Device first, then user, as the contract orders them; a password shaped like an API key or a
   * token tries the user first, so an API user's login is not recorded as an unknown device.
   */
  async function identify(userName: string, password: string, remoteAddress: string | null): Promise<AuthResult> {
    const userFirst = looksLikeApiKey(password) || looksLikeJwt(password);
    if (userFirst) {
      const user = await asUser(userName, password);
      if (user) return { ok: true, identity: user };
    }
    const r = await directory.resolve(userName, PROTOCOL, remoteAddress);
    if (r.status === 'ok' && r.device.mqttPasswordHash && devicePasswordMatches(password, r.device.mqttPasswordHash)) {
      return { ok: true, identity: { kind: 'device', deviceId: r.device.id, accountId: r.device.accountId, passwordHash: r.device.mqttPasswordHash } };
    }
    const user = userFirst ? null : await asUser(userName, password);
    if (user) return { ok: true, identity: user };
    if (r.status === 'expired') return { ok: false, returnCode: 5, reason: 'device expired' };
    return { ok: false, returnCode: 4, reason: r.status === 'unknown' ? 'unknown device or user' : 'wrong password' };
  }

  async function authenticate(clientId: string, userName: string | undefined, password: Buffer | undefined, remoteAddress: string | null): Promise<AuthResult> {
    if (!userName || !password || password.length === 0 || password.length > 4096) {
      return { ok: false, returnCode: 4, reason: 'no user name or password' };
    }
    const key = `${remoteAddress ?? ''}\u0000${userName}`;
    if (blocked(key)) return { ok: false, returnCode: 5, reason: 'too many failed logins' };
    const result = await identify(userName, password.toString('utf8'), remoteAddress);
    if (!result.ok) {
      fail(key);
      return result;
    }
    failures.delete(key);
    if (!clientIdFits(clientId, userName)) return { ok: false, returnCode: 2, reason: 'client id must start with the user name' };
    const holder = holders.get(clientId);
    const me = holderKey(result.identity);
    if (holder !== undefined && holder !== me) return { ok: false, returnCode: 2, reason: 'client id held by another identity' };
    if (holders.size > 200_000) holders.delete(holders.keys().next().value as string);
    holders.set(clientId, me);
    return result;
  }

  /** Re-checks a connected API user; null when it may no longer log in. */
  async function recheck(identity: Extract<Identity, { kind: 'user' }>): Promise<Principal | null> {
    const c = identity.credential;
    return c.type === 'token' ? tokens.principalForToken(c.token) : tokens.principalForApiKey(identity.principal.userName, c.apiKey);
  }

  return { authenticate, recheck };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;
