/** Opaque cursors for long range queries: the position after the last item of a page. */
import { DomainError } from './errors.js';

export interface CursorPosition {
  t: number;
  id?: number;
}

export const encodeCursor = (c: CursorPosition): string => Buffer.from(JSON.stringify(c)).toString('base64url');

export function decodeCursor(cursor: string): CursorPosition {
  try {
    const c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as CursorPosition;
    if (typeof c.t !== 'number' || (c.id !== undefined && typeof c.id !== 'number')) throw new Error('shape');
    return c;
  } catch {
    throw new DomainError('INVALID_CURSOR', 'cursor is not one this service returned; start again without it.', {
      field: 'cursor',
    });
  }
}

export const DEFAULT_PAGE = 1000;
export const MAX_PAGE = 10_000;

export interface TimeRange {
  from: string;
  to: string;
  limit?: number;
  cursor?: string;
}

export function rangeBounds(r: TimeRange): { fromMs: number; toMs: number; limit: number } {
  const fromMs = new Date(r.from).getTime();
  const toMs = new Date(r.to).getTime();
  if (fromMs > toMs) throw new DomainError('VALIDATION_FAILED', 'from must not be after to.', { field: 'from' });
  return { fromMs, toMs, limit: Math.min(r.limit ?? DEFAULT_PAGE, MAX_PAGE) };
}
