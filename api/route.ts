/**
 * One declaration per endpoint: the same zod schemas validate the request and describe it in the
 * OpenAPI document, so the document cannot drift from what the code accepts.
 */
import type Router from '@koa/router';
import { Readable } from 'node:stream';
import type { Context } from 'koa';
import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from './schemas/zod.js';
import { DomainError } from '../core/errors.js';
import { readJsonBody, checkInputBounds } from './body.js';
import { errorResponseSchema } from './schemas/common.schemas.js';
import type { Principal } from '../core/model/user.js';

/** JSON text already serialised (a stored location), embedded in an answer as it is. */
export class JsonText {
  constructor(readonly text: string) {}
}

/**
 * A file answer (an export): its text streamed as the client reads it, with
 * `Content-Disposition: attachment`. Whatever refuses the request must be thrown before it is
 * made: once its first byte is sent the status is 200, and a failure later can only cut the
 * answer short (the client sees the connection end before the last chunk).
 */
export class FileAnswer {
  constructor(
    readonly contentType: string,
    /** ASCII without quotes or backslashes */
    readonly fileName: string,
    readonly chunks: AsyncIterable<string>,
  ) {}
}

export interface Usage {
  minute: number;
  day: number;
}

/**
 * The answer's JSON as JSON.stringify writes it, except that JsonText values are embedded as they
 * are, with the caller's usage last (`apiUsage`, `apiDailyUsage` in every authenticated answer).
 */
export function serialiseBody(body: object, usage: Usage | undefined): string {
  const fields = body as Record<string, unknown>;
  let json = '';
  for (const key in fields) {
    if (fields[key] instanceof JsonText) {
      json = withEmbeddedText(fields);
      break;
    }
  }
  json ||= JSON.stringify(body);
  if (!usage) return json;
  const tail = `"apiUsage":${usage.minute},"apiDailyUsage":${usage.day}}`;
  return json === '{}' ? `{${tail}` : `${json.slice(0, -1)},${tail}`;
}

function withEmbeddedText(body: Record<string, unknown>): string {
  let out = '';
  for (const key in body) {
    const value = body[key];
    const text = value instanceof JsonText ? value.text : JSON.stringify(value);
    if (text !== undefined) out += `${out ? ',' : '{'}${JSON.stringify(key)}:${text}`;
  }
  return out ? `${out}}` : '{}';
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** Answers `body` as JSON, with the caller's usage when the request was authenticated (errors too). */
export function answerJson(ctx: Context, body: object): void {
  // The type first: Koa then leaves it alone instead of looking one up for the string.
  ctx.set('Content-Type', JSON_TYPE);
  ctx.body = serialiseBody(body, ctx.state.usage as Usage | undefined);
}

/**
 * Where routes go: the API's one router, the OpenAPI registry, the guard (bearer token, then the
 * request limit) that runs before every route with `auth`, and the body size limit.
 */
export interface RouteTable {
  router: Router;
  registry: OpenAPIRegistry;
  guard: (ctx: Context) => Promise<void>;
  bodyLimitBytes: number;
}

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface RouteSpec<B extends z.ZodType | undefined, Q extends z.ZodType | undefined> {
  method: Method;
  /** OpenAPI style: /api/devices/{deviceId} */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  /** needs a bearer token (default true) */
  auth?: boolean;
  body?: B;
  /** the request body as the document shows it, for a route that reads its body itself (not JSON only) */
  bodyDoc?: { content: Record<string, { schema: z.ZodType }>; description?: string };
  query?: Q;
  /** `files`: the media types of a FileAnswer (a string each), instead of a JSON `schema` or beside it (chosen by Accept) */
  responses: Record<number, { description: string; schema?: z.ZodType; files?: string[] }>;
  handler: (
    ctx: Context,
    input: {
      body: B extends z.ZodType ? z.infer<B> : undefined;
      query: Q extends z.ZodType ? z.infer<Q> : undefined;
      params: Record<string, string>;
      principal: Principal;
    },
  ) => Promise<{ status?: number; body: Record<string, unknown> } | FileAnswer>;
}

/** "latitude: Too big: expected number to be <=90" for the first problem; all of them in details. */
export function validationError(error: z.ZodError, where: 'body' | 'query'): DomainError {
  const issues = error.issues.map((i) => ({ field: i.path.join('.') || where, message: i.message }));
  const first = issues[0];
  return new DomainError('VALIDATION_FAILED', `${first.field}: ${first.message}`, { field: first.field, issues });
}

function parse<T extends z.ZodType>(schema: T, value: unknown, where: 'body' | 'query'): z.infer<T> {
  const r = schema.safeParse(value);
  if (!r.success) throw validationError(r.error, where);
  return r.data;
}

export function addRoute<B extends z.ZodType | undefined, Q extends z.ZodType | undefined>(
  api: RouteTable,
  spec: RouteSpec<B, Q>,
): void {
  const auth = spec.auth ?? true;
  const paramNames = [...spec.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const responses: RouteConfig['responses'] = {};
  for (const [status, r] of Object.entries(spec.responses)) {
    responses[status] = r.files
      ? {
          description: r.description,
          headers: { 'Content-Disposition': { description: 'attachment; filename="…"', schema: { type: 'string' } } },
          content: {
            ...(r.schema && { 'application/json': { schema: r.schema } }),
            ...Object.fromEntries(r.files.map((type) => [type, { schema: z.string() }])),
          },
        }
      : r.schema
        ? { description: r.description, content: { 'application/json': { schema: r.schema } } }
        : { description: r.description };
  }
  const errors: Record<number, string> = { 500: 'Unexpected failure (no stack is ever returned).' };
  if (spec.body || spec.bodyDoc || spec.query) errors[400] = 'Bad input: the message names the field.';
  if (spec.body || spec.bodyDoc)
    Object.assign(errors, { 413: 'Body larger than the configured limit.', 415: 'Body is not JSON.' });
  if (spec.method === 'patch')
    errors[413] =
      'Body larger than the configured limit, or the patch would place more than that many bytes of JSON (see JsonPatch).';
  if (auth) {
    Object.assign(errors, {
      401: 'No valid token (WWW-Authenticate: Bearer).',
      403: "FORBIDDEN: the caller's privileges, or its group, do not allow this (a user without any privilege gets it on every endpoint).",
      429: 'Too many requests (Retry-After).',
    });
  }
  for (const [status, description] of Object.entries(errors)) {
    responses[status] ??= { description, content: { 'application/json': { schema: errorResponseSchema } } };
  }
  api.registry.registerPath({
    method: spec.method,
    path: spec.path,
    summary: spec.summary,
    description: spec.description,
    tags: spec.tags,
    security: auth ? [{ bearer: [] }] : [],
    request: {
      params: paramNames.length ? z.object(Object.fromEntries(paramNames.map((n) => [n, z.string()]))) : undefined,
      query: spec.query as z.ZodObject | undefined,
      body: spec.body
        ? { required: true, content: { 'application/json': { schema: spec.body } } }
        : spec.bodyDoc && { required: true, ...spec.bodyDoc },
    },
    responses,
  });
  const koaPath = spec.path.replace(/\{(\w+)\}/g, ':$1');
  api.router[spec.method](koaPath, async (ctx) => {
    if (auth) await api.guard(ctx);
    for (const name of paramNames) checkInputBounds(ctx.params[name], name);
    const body = spec.body ? parse(spec.body, await readJsonBody(ctx, api.bodyLimitBytes), 'body') : undefined;
    const query = spec.query ? parse(spec.query, checkInputBounds({ ...ctx.query }, 'query'), 'query') : undefined;
    const out = await spec.handler(ctx, {
      body: body as never,
      query: query as never,
      params: ctx.params as Record<string, string>,
      principal: ctx.state.principal as Principal,
    });
    if (out instanceof FileAnswer) {
      answerFile(ctx, out);
      return;
    }
    ctx.status = out.status ?? 200;
    answerJson(ctx, out.body);
  });
}

/**
 * Koa pipes the stream into the response: a chunk is asked for only when the socket has taken the
 * ones before (backpressure), and a client that goes away destroys the stream, which ends the
 * reading behind it.
 */
function answerFile(ctx: Context, file: FileAnswer): void {
  ctx.status = 200;
  ctx.set('Content-Type', file.contentType);
  ctx.set('Content-Disposition', `attachment; filename="${file.fileName}"`);
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.body = Readable.from(file.chunks, { objectMode: false });
}
