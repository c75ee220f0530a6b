/**
 * Who an MQTT client is (docs/contract.md §3 "MQTT"): a device (its id and MQTT password) or an API
 * user (its userName and an API key or token), and which client ids each may use. CONNACK codes,
 * client-id ownership and the failed-login limits are described in docs/mqtt.md.
 * Failed logins are counted per identity and address and per address (core/quota), so one bad
 * password never locks a device out everywhere, and one misconfigured tracker behind a carrier NAT
 * does not lock out the others. A valid token always gets in: it cannot be guessed.
 */
import type { DeviceDirectory } from '../../core/devices/device-directory.js';
import type { TokensService } from '../../core/auth/tokens.service.js';
import type { Principal } from '../../core/model/user.js';
import { devicePasswordMatches } from '../../core/secrets.js';
import { failedLoginKeys } from '../../core/auth/tokens.service.js';
import type { FailedLoginLimiter } from '../../core/quota/rate-limiter.js';
import { createMemoryFailedLogins } from '../../core/quota/rate-limiter.memory.js';

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

export type AuthResult =
  | { ok: true; identity: Identity; holding?: Holding }
  | { ok: false; returnCode: 2 | 4 | 5; reason: string; deviceId?: string };

export const PROTOCOL = 'mqtt';

/**
 * Failed logins allowed in a window that opens at the first: 10 of one identity from one address
 * (as before, and as REST allows a user name), 100 from one address in all (ten identities'
 * worth, for trackers sharing a carrier NAT's address).
 */
export const MQTT_LOGIN_LIMITS = { identity: 10, address: 100, windowSeconds: 300 } as const;

/** Where failed MQTT logins are counted: per address, and per identity from an address. */
export interface MqttLoginLimiters {
  address: FailedLoginLimiter;
  identity: FailedLoginLimiter;
}

/** In process (one instance without Redis); main.ts makes the Redis pair (createRedisFailedLogins) when Redis is set. */
export function memoryLoginLimiters(): MqttLoginLimiters {
  return {
    address: createMemoryFailedLogins(MQTT_LOGIN_LIMITS.address, MQTT_LOGIN_LIMITS.windowSeconds),
    identity: createMemoryFailedLogins(MQTT_LOGIN_LIMITS.identity, MQTT_LOGIN_LIMITS.windowSeconds),
  };
}

const looksLikeJwt = (s: string): boolean => /^eyJ[\w-]*\.[\w-]+\.[\w-]+$/.test(s);
const looksLikeApiKey = (s: string): boolean => s.startsWith('tg_');

/** `exp` of a token already verified by the tokens service, in epoch ms. */
function tokenExpiry(token: string): number | null {
  try {
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as {
      exp?: unknown;
    };
    return typeof claims.exp === 'number' ? claims.exp * 1000 : null;
  } catch {
    return null;
  }
}

/**
 * How much of the client id the user name claims: the length of the user name when the client id
 * starts with it, else of OwnTracks' Android default form (`(username + deviceId)` with `\W`
 * removed, lower-cased), else null (not this identity's client id).
 */
export function clientIdPrefix(clientId: string, userName: string): number | null {
  if (clientId.startsWith(userName)) return userName.length;
  const folded = userName.replace(/\W/g, '').toLowerCase();
  return folded.length > 0 && clientId.startsWith(folded) ? folded.length : null;
}

/** Device ids (api/schemas/devices.schemas.ts): 1–64 of letters, digits and `_ . : -`. */
const DEVICE_ID_CHAR = /^[A-Za-z0-9_.:-]$/;
const DEVICE_ID_MAX = 64;

/** The prefixes of a client id, from `fromLength` characters on, that could be device ids. */
export function deviceIdsBeginning(clientId: string, fromLength: number): string[] {
  const ids: string[] = [];
  const end = Math.min(clientId.length, DEVICE_ID_MAX);
  for (let k = 1; k <= end; k++) {
    if (!DEVICE_ID_CHAR.test(clientId[k - 1]!)) break;
    if (k >= fromLength) ids.push(clientId.slice(0, k));
  }
  return ids;
}

/** A connection's claim on its client id, released when the connection ends. */
export interface Holding {
  readonly clientId: string;
  readonly holder: string;
  /** the strength of the claim: the name's length, a device a half point above a user */
  readonly rank: number;
}

export interface AuthDeps {
  directory: DeviceDirectory;
  tokens: TokensService;
  /** default: in process (memoryLoginLimiters) */
  failedLogins?: MqttLoginLimiters;
}

/** Who may connect over MQTT and with which client id (docs/contract.md §3, MQTT 3.1.1 §3.1.3). */
export interface Authenticator {
  /** checks a CONNECT's credentials and client id; on success the connection holds the client id until `release` */
  authenticate(
    clientId: string,
    userName: string | undefined,
    password: Buffer | undefined,
    remoteAddress: string | null,
  ): Promise<AuthResult>;
  /** an API user's principal as it is now (null: the user or its credential no longer logs in) */
  recheck(identity: Extract<Identity, { kind: 'user' }>): Promise<Principal | null>;
  /** the connection holding a client id has ended */
  release(holding: Holding): void;
}

const holderKey = (i: Identity): string => (i.kind === 'device' ? `d:${i.deviceId}` : `u:${i.principal.userId}`);

async function asUser(tokens: TokensService, userName: string, password: string): Promise<Identity | null> {
  if (looksLikeJwt(password)) {
    const principal = await tokens.principalForToken(password);
    if (!principal || principal.userName.toLowerCase() !== userName.toLowerCase()) return null;
    return {
      kind: 'user',
      principal,
      credential: { type: 'token', token: password },
      expiresAtMs: tokenExpiry(password),
    };
  }
  const principal = await tokens.principalForApiKey(userName, password);
  return principal
    ? { kind: 'user', principal, credential: { type: 'apiKey', apiKey: password }, expiresAtMs: null }
    : null;
}

/**
 * Device first, then user, as the contract orders them; a password shaped like an API key tries
 * the user first, so an API user's login is not recorded as an unknown device. A token was
 * tried before (login).
 */
async function identify(
  deps: AuthDeps,
  userName: string,
  password: string,
  remoteAddress: string | null,
): Promise<AuthResult> {
  const userFirst = looksLikeApiKey(password);
  if (userFirst) {
    const user = await asUser(deps.tokens, userName, password);
    if (user) return { ok: true, identity: user };
  }
  const r = await deps.directory.resolve(userName, PROTOCOL, remoteAddress);
  if (r.status === 'ok' && r.device.mqttPasswordHash && devicePasswordMatches(password, r.device.mqttPasswordHash)) {
    return {
      ok: true,
      identity: {
        kind: 'device',
        deviceId: r.device.id,
        accountId: r.device.accountId,
        passwordHash: r.device.mqttPasswordHash,
      },
    };
  }
  const user = userFirst || looksLikeJwt(password) ? null : await asUser(deps.tokens, userName, password);
  if (user) return { ok: true, identity: user };
  if (r.status === 'expired') return { ok: false, returnCode: 5, reason: 'device expired', deviceId: userName };
  if (r.status !== 'ok') return { ok: false, returnCode: 4, reason: 'unknown device or user' };
  // mqttPassword is write-only on the device record: a device created without one cannot log in
  if (!r.device.mqttPasswordHash)
    return { ok: false, returnCode: 4, reason: 'no MQTT password set', deviceId: r.device.id };
  return { ok: false, returnCode: 4, reason: 'wrong password', deviceId: r.device.id };
}

/** Checks the credentials within the failed-login limits (the file's comment). */
async function login(
  deps: AuthDeps,
  limits: MqttLoginLimiters,
  userName: string,
  password: string,
  remoteAddress: string | null,
): Promise<AuthResult> {
  if (looksLikeJwt(password)) {
    const user = await asUser(deps.tokens, userName, password);
    if (user) return { ok: true, identity: user };
  }
  // the token endpoint's keys: the address, and the user name from the address
  const [address, identity] = failedLoginKeys(userName, remoteAddress ?? '');
  // whether the address, or this identity from it, failed too often
  const waits = await Promise.all([limits.address.blockedFor([address!]), limits.identity.blockedFor([identity!])]);
  if (waits.some((w) => w > 0)) return { ok: false, returnCode: 5, reason: 'too many failed logins' };
  const result = await identify(deps, userName, password, remoteAddress);
  if (!result.ok)
    await Promise.all([limits.address.recordFailure([address!]), limits.identity.recordFailure([identity!])]);
  return result;
}

/** A device whose id begins the client id and is `fromLength` characters or longer. */
async function longerDevice(
  directory: DeviceDirectory,
  clientId: string,
  fromLength: number,
): Promise<string | undefined> {
  const ids = deviceIdsBeginning(clientId, fromLength);
  const found = await Promise.all(ids.map((id) => directory.find(id)));
  return found.find((d) => d !== undefined)?.id;
}

export function createAuthenticator(deps: AuthDeps): Authenticator {
  const { directory, tokens } = deps;
  const limits = deps.failedLogins ?? memoryLoginLimiters();
  /** client id -> the claim of the connection that uses it (forgotten when that connection ends) */
  const holders = new Map<string, Holding>();

  async function authenticate(
    clientId: string,
    userName: string | undefined,
    password: Buffer | undefined,
    remoteAddress: string | null,
  ): Promise<AuthResult> {
    if (!userName || !password || password.length === 0 || password.length > 4096) {
      return { ok: false, returnCode: 4, reason: 'no user name or password' };
    }
    const result = await login(deps, limits, userName, password.toString('utf8'), remoteAddress);
    if (!result.ok) return result;
    const prefix = clientIdPrefix(clientId, userName);
    if (prefix === null) return { ok: false, returnCode: 2, reason: 'client id must start with the user name' };
    const isDevice = result.identity.kind === 'device';
    const owner = await longerDevice(directory, clientId, prefix + 1);
    if (owner) return { ok: false, returnCode: 2, reason: `client id belongs to device ${owner}` };
    const holding: Holding = { clientId, holder: holderKey(result.identity), rank: prefix + (isDevice ? 0.5 : 0) };
    const current = holders.get(clientId);
    if (current && current.holder !== holding.holder && current.rank >= holding.rank) {
      return { ok: false, returnCode: 2, reason: 'client id in use by another identity' };
    }
    holders.set(clientId, holding);
    return { ...result, holding };
  }

  /** The connection holding a client id ended: the client id is free (unless another took it over). */
  function release(holding: Holding): void {
    if (holders.get(holding.clientId) === holding) holders.delete(holding.clientId);
  }

  /** Re-checks a connected API user; null when it may no longer log in. */
  async function recheck(identity: Extract<Identity, { kind: 'user' }>): Promise<Principal | null> {
    const c = identity.credential;
    return c.type === 'token'
      ? tokens.principalForToken(c.token)
      : tokens.principalForApiKey(identity.principal.userName, c.apiKey);
  }

  return { authenticate, recheck, release };
}
