/** The one table that maps domain error codes to HTTP statuses (CONTRIBUTING.md convention 8). */
import type { ErrorCode } from '../core/errors.js';
import { isStorageUnavailable } from '../core/db/storage-errors.js';

export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  VALIDATION_FAILED: 400,
  INVALID_JSON: 400,
  INVALID_CURSOR: 400,
  UNSUPPORTED_MEDIA_TYPE: 415,
  PAYLOAD_TOO_LARGE: 413,
  INVALID_CREDENTIALS: 401,
  INVALID_TOKEN: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  DEVICE_NOT_FOUND: 404,
  GROUP_NOT_FOUND: 404,
  USER_NOT_FOUND: 404,
  LOCATION_NOT_FOUND: 404,
  ZONE_NOT_FOUND: 404,
  RULE_NOT_FOUND: 404,
  RULE_LIMIT_REACHED: 409,
  FORWARD_NOT_FOUND: 404,
  ZONE_IN_USE: 409,
  GROUP_IN_USE: 409,
  DEVICE_EXISTS: 409,
  USER_EXISTS: 409,
  NO_LICENSE_AVAILABLE: 409,
  DEVICE_EXPIRED: 409,
  COMMAND_NOT_FOUND: 404,
  COMMAND_NOT_QUEUED: 409,
  COMMAND_UNSUPPORTED: 409,
  SMS_UNAVAILABLE: 409,
  SMS_FAILED: 502,
  PATCH_FAILED: 409,
  RATE_LIMITED: 429,
  STORAGE_UNAVAILABLE: 503,
  STARTING: 503,
  STORAGE_LOW: 503,
  INTERNAL: 500,
};

export interface ErrorBody {
  success: false;
  error: string;
  code: ErrorCode;
  details?: Record<string, unknown>;
}

/**
 * A storage outage (the database refuses connections, is shutting down, is locked or full) is not
 * a bug: it answers 503 STORAGE_UNAVAILABLE with Retry-After, so clients retry, instead of 500.
 */
export function storageUnavailableBody(e: unknown): ErrorBody | undefined {
  if (!isStorageUnavailable(e)) return undefined;
  return {
    success: false,
    error: 'Storage is not available right now; try again in a few seconds.',
    code: 'STORAGE_UNAVAILABLE',
  };
}

export const STORAGE_RETRY_AFTER_SECONDS = 5;
