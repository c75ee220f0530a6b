/**
 * Reads a JSON request body with a size limit: 415 when it is not JSON, 413 when too large,
 * 400 when it does not parse, nests deeper than MAX_JSON_DEPTH or holds a NUL character in any
 * string (core/ingest/json.limits.ts says why). Nothing is stored before the body is whole and valid.
 */
import type { Context } from 'koa';
import { DomainError } from '../core/errors.js';
import { jsonInputProblem } from '../core/ingest/json.limits.js';

const JSON_TYPES = ['application/json', 'application/json-patch+json', 'application/merge-patch+json'];

function isJsonType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const base = contentType.split(';')[0].trim().toLowerCase();
  return JSON_TYPES.includes(base) || base.endsWith('+json');
}

async function readLimited(ctx: Context, limit: number): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || NaN);
  if (declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      ctx.req.destroy();
      throw tooLarge(limit);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

const tooLarge = (limit: number): DomainError =>
  new DomainError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes; send fewer items per request.`);

/** The body as text (UTF-8), at most `limitBytes` (413 beyond): for a route that takes more than JSON. */
export async function readTextBody(ctx: Context, limitBytes: number): Promise<string> {
  return (await readLimited(ctx, limitBytes)).toString('utf8');
}

/** Whether the request's Content-Type is one of the JSON types readJsonBody takes. */
export const isJsonRequest = (ctx: Context): boolean => isJsonType(ctx.get('content-type'));

/** The parsed JSON body of a POST/PUT/PATCH, or undefined when there is none. */
export async function readJsonBody(ctx: Context, limitBytes: number): Promise<unknown> {
  const hasBody = ctx.request.length > 0 || ctx.get('transfer-encoding') !== '';
  if (!hasBody) return undefined;
  if (!isJsonType(ctx.get('content-type'))) {
    throw new DomainError(
      'UNSUPPORTED_MEDIA_TYPE',
      'Send the body as JSON with the header Content-Type: application/json.',
    );
  }
  const text = (await readLimited(ctx, limitBytes)).toString('utf8');
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new DomainError('INVALID_JSON', `The request body is not valid JSON (${(e as Error).message}).`);
  }
  return checkInputBounds(value, 'body');
}

/**
 * `value` (a parsed body, the query, a path parameter) when it is within the bounds of
 * jsonInputProblem; otherwise a 400 naming the field. Path parameters and the query go through it
 * too: a NUL in `/api/devices/a%00b` would reach PostgreSQL as well.
 */
export function checkInputBounds<T>(value: T, where: string): T {
  if (typeof value === 'string' && !value.includes('\u0000')) return value;
  const problem = jsonInputProblem(value);
  if (!problem) return value;
  const field = problem.field || where;
  throw new DomainError('VALIDATION_FAILED', `${field}: ${problem.message}`, {
    field,
    issues: [{ field, message: problem.message }],
  });
}
