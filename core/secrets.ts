/**
 * API keys and passwords. API keys are 256-bit random values, so a SHA-256 digest is a safe and
 * fast way to store them; comparisons are constant time. User passwords (low entropy) use scrypt.
 * Device MQTT passwords use salted SHA-256: a reconnect storm after a restart must not stall the broker.
 */
import { createHash, randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';

export function generateApiKey(): string {
  return `tg_${randomBytes(32).toString('base64url')}`;
}

export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

export function apiKeyMatches(key: string, storedHash: string): boolean {
  const a = Buffer.from(hashApiKey(key), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

export function hashPassword(password: string): string {
  const salt = randomBytes(16);
  return `scrypt$${salt.toString('base64url')}$${scryptSync(password, salt, 32).toString('base64url')}`;
}

export function hashDevicePassword(password: string): string {
  const salt = randomBytes(16).toString('base64url');
  return `sha256$${salt}$${createHash('sha256').update(salt).update(password, 'utf8').digest('base64url')}`;
}

export function devicePasswordMatches(password: string, stored: string): boolean {
  const [scheme, salt, digest] = stored.split('$');
  if (scheme !== 'sha256' || !salt || !digest) return false;
  const a = createHash('sha256').update(salt).update(password, 'utf8').digest();
  const b = Buffer.from(digest, 'base64url');
  return a.length === b.length && timingSafeEqual(a, b);
}

export const randomSecret = (): string => randomBytes(48).toString('base64url');
