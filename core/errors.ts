/**
 * Errors the domain raises, each with a stable machine code. api/errors.ts maps codes to HTTP
 * statuses; the message is a sentence a person can act on.
 */
export type ErrorCode =
  | 'VALIDATION_FAILED'
  | 'INVALID_JSON'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'PAYLOAD_TOO_LARGE'
  | 'INVALID_CREDENTIALS'
  | 'INVALID_TOKEN'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'DEVICE_NOT_FOUND'
  | 'GROUP_NOT_FOUND'
  | 'USER_NOT_FOUND'
  | 'LOCATION_NOT_FOUND'
  | 'ZONE_NOT_FOUND'
  | 'RULE_NOT_FOUND'
  | 'RULE_LIMIT_REACHED'
  | 'FORWARD_NOT_FOUND'
  | 'ZONE_IN_USE'
  | 'GROUP_IN_USE'
  | 'DEVICE_EXISTS'
  | 'USER_EXISTS'
  | 'NO_LICENSE_AVAILABLE'
  | 'DEVICE_EXPIRED'
  | 'COMMAND_NOT_FOUND'
  | 'COMMAND_NOT_QUEUED'
  | 'COMMAND_UNSUPPORTED'
  | 'SMS_UNAVAILABLE'
  | 'SMS_FAILED'
  | 'INVALID_CURSOR'
  | 'PATCH_FAILED'
  | 'RATE_LIMITED'
  | 'STORAGE_UNAVAILABLE'
  | 'STARTING'
  | 'STORAGE_LOW'
  | 'INTERNAL';

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const notFound = (code: ErrorCode, what: string): DomainError => new DomainError(code, `${what} was not found.`);
