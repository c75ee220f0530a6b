import test from 'ava';
import { startServer } from '../helpers/server.js';

/**
 * No OpenAPI validator is installed (and none is added for one test): the document is checked
 * against the parts of OpenAPI 3.1 (spec.openapis.org/oas/v3.1.0) and JSON Schema 2020-12 that
 * client generators rely on, and every `pattern` is compiled as an ECMA-262 regex, as a client
 * generated from the document would.
 */
type Json = Record<string, any>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const TYPES = ['null', 'boolean', 'object', 'array', 'number', 'string', 'integer'];
/** Keywords of JSON Schema 2020-12 and the OpenAPI 3.1 Schema Object that the generator may write. */
const SCHEMA_KEYWORDS = new Set([
  '$ref',
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'prefixItems',
  'enum',
  'const',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'propertyNames',
  'description',
  'title',
  'default',
  'example',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  'discriminator',
]);
/** Valid date-times a client sends: each must match every date-time pattern. */
const DATE_TIMES = [
  '2026-03-01T10:00:00Z',
  '2026-03-01T10:00:00.000Z',
  '2026-03-01T11:00:00+01:00',
  '2026-03-01T10:00:00.123456-05:30',
  '2026-03-01T10:00Z',
];

function checkSchema(
  t: { true(v: boolean, m?: string): void; fail(m?: string): void },
  s: unknown,
  where: string,
  refs: string[],
  patterns: [string, string, unknown[]][],
): void {
  if (typeof s === 'boolean') return;
  if (typeof s !== 'object' || s === null || Array.isArray(s))
    return t.fail(`${where}: a schema is an object or a boolean`);
  const o = s as Json;
  for (const k of Object.keys(o))
    t.true(SCHEMA_KEYWORDS.has(k) || k.startsWith('x-'), `${where}: "${k}" is not a keyword of an OpenAPI 3.1 schema`);
  if ('nullable' in o) t.fail(`${where}: nullable is OpenAPI 3.0; 3.1 writes type: [..., "null"]`);
  if (o.$ref !== undefined) refs.push(String(o.$ref));
  if (o.type !== undefined) {
    const types = Array.isArray(o.type) ? o.type : [o.type];
    t.true(
      types.length > 0 && types.every((x: unknown) => TYPES.includes(String(x))),
      `${where}: type ${JSON.stringify(o.type)}`,
    );
  }
  if (o.required !== undefined) {
    t.true(
      Array.isArray(o.required) && o.required.every((x: unknown) => typeof x === 'string'),
      `${where}: required is a list of names`,
    );
    if (o.properties) for (const r of o.required) t.true(r in o.properties, `${where}: required "${r}" is a property`);
  }
  for (const k of [
    'minimum',
    'maximum',
    'minLength',
    'maxLength',
    'minItems',
    'maxItems',
    'exclusiveMinimum',
    'exclusiveMaximum',
  ]) {
    if (o[k] !== undefined) t.true(typeof o[k] === 'number', `${where}: ${k} is a number`);
  }
  if (o.enum !== undefined) t.true(Array.isArray(o.enum) && o.enum.length > 0, `${where}: enum is a non-empty list`);
  if (o.examples !== undefined)
    t.true(Array.isArray(o.examples), `${where}: examples is a list in JSON Schema 2020-12`);
  if (o.pattern !== undefined) {
    t.true(typeof o.pattern === 'string', `${where}: pattern is a string`);
    patterns.push([where, o.pattern, [...(o.example !== undefined ? [o.example] : []), ...(o.examples ?? [])]]);
  }
  for (const [k, v] of Object.entries((o.properties ?? {}) as Json))
    checkSchema(t, v, `${where}.properties.${k}`, refs, patterns);
  if (o.additionalProperties !== undefined)
    checkSchema(t, o.additionalProperties, `${where}.additionalProperties`, refs, patterns);
  if (o.propertyNames !== undefined) checkSchema(t, o.propertyNames, `${where}.propertyNames`, refs, patterns);
  if (o.items !== undefined) checkSchema(t, o.items, `${where}.items`, refs, patterns);
  for (const k of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) {
    if (o[k] !== undefined) {
      t.true(Array.isArray(o[k]) && o[k].length > 0, `${where}: ${k} is a non-empty list`);
      (o[k] as unknown[]).forEach((x, i) => checkSchema(t, x, `${where}.${k}.${i}`, refs, patterns));
    }
  }
  if (o.not !== undefined) checkSchema(t, o.not, `${where}.not`, refs, patterns);
}

test('api.openapi: the document is OpenAPI 3.1; every pattern compiles as an ECMA-262 regex and accepts the examples and real date-times', async (t) => {
  const s = await startServer('sqlite');
  t.teardown(() => s.stop());
  const doc = (await s.request('GET', '/api/openapi.json')).body as Json;

  t.regex(doc.openapi, /^3\.1\.\d+$/);
  t.is(typeof doc.info?.title, 'string');
  t.is(typeof doc.info?.version, 'string');
  for (const k of Object.keys(doc))
    t.true(
      [
        'openapi',
        'info',
        'jsonSchemaDialect',
        'servers',
        'paths',
        'webhooks',
        'components',
        'security',
        'tags',
        'externalDocs',
      ].includes(k) || k.startsWith('x-'),
      `top-level "${k}"`,
    );

  const refs: string[] = [];
  const patterns: [string, string, unknown[]][] = [];
  const operationIds = new Set<string>();
  const schemes = Object.keys(doc.components?.securitySchemes ?? {});
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    t.true(path.startsWith('/'), `${path} starts with /`);
    const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    for (const [method, op] of Object.entries(item as Json)) {
      const where = `${method} ${path}`;
      if (method === 'parameters' || method === 'summary' || method === 'description') continue;
      t.true(METHODS.includes(method), `${where}: a method`);
      if (op.operationId !== undefined) {
        t.false(operationIds.has(op.operationId), `${where}: operationId unique`);
        operationIds.add(op.operationId);
      }
      const params = (op.parameters ?? []) as Json[];
      for (const p of params) {
        t.true(
          typeof p.name === 'string' && ['query', 'header', 'path', 'cookie'].includes(p.in),
          `${where}: parameter ${JSON.stringify(p).slice(0, 80)}`,
        );
        if (p.in === 'path') t.is(p.required, true, `${where}: path parameter ${p.name} is required`);
        t.true('schema' in p !== 'content' in p, `${where}: parameter ${p.name} has a schema or a content`);
        if (p.schema) checkSchema(t, p.schema, `${where} parameter ${p.name}`, refs, patterns);
      }
      for (const name of templated)
        t.true(
          params.some((p) => p.in === 'path' && p.name === name),
          `${where}: {${name}} is declared`,
        );
      for (const p of params.filter((x) => x.in === 'path'))
        t.true(templated.includes(p.name), `${where}: path parameter ${p.name} is in the path`);
      if (op.requestBody) {
        t.is(typeof op.requestBody.content, 'object', `${where}: requestBody has content`);
        for (const [type, media] of Object.entries(op.requestBody.content as Json))
          checkSchema(t, media.schema, `${where} body ${type}`, refs, patterns);
      }
      t.true(op.responses && Object.keys(op.responses).length > 0, `${where}: has responses`);
      for (const [status, r] of Object.entries(op.responses as Json)) {
        t.regex(status, /^([1-5](\d\d|XX)|default)$/, `${where}: response key`);
        t.is(typeof r.description, 'string', `${where} ${status}: description`);
        for (const [type, media] of Object.entries((r.content ?? {}) as Json))
          checkSchema(t, media.schema, `${where} ${status} ${type}`, refs, patterns);
      }
      for (const req of (op.security ?? []) as Json[])
        for (const name of Object.keys(req)) t.true(schemes.includes(name), `${where}: security scheme ${name} exists`);
    }
  }
  for (const [name, schema] of Object.entries((doc.components?.schemas ?? {}) as Json)) {
    t.regex(name, /^[a-zA-Z0-9.\-_]+$/, `component name ${name}`);
    checkSchema(t, schema, `#/components/schemas/${name}`, refs, patterns);
  }
  for (const ref of refs) {
    const m = /^#\/components\/schemas\/(.+)$/.exec(ref);
    t.truthy(m && doc.components.schemas[m[1]], `$ref ${ref} resolves`);
  }

  t.true(patterns.length > 10, 'the patterns were found');
  let dateTimePatterns = 0;
  for (const [where, source, examples] of patterns) {
    let re: RegExp | undefined;
    try {
      re = new RegExp(source, 'u');
    } catch (e) {
      t.fail(`${where}: pattern ${source} is not an ECMA-262 regex (${(e as Error).message})`);
      continue;
    }
    for (const example of examples)
      t.true(
        typeof example === 'string' && re.test(example),
        `${where}: pattern ${source} accepts its example ${JSON.stringify(example)}`,
      );
    if (/date-?time|from|to|expires/i.test(where.split('.').pop() ?? '')) {
      dateTimePatterns++;
      for (const d of DATE_TIMES) t.true(re.test(d), `${where}: pattern ${source} accepts ${d}`);
      t.false(re.test('2026-03-01'), `${where}: a date alone is not a date-time`);
    }
  }
  t.true(dateTimePatterns >= 8, `every date-time field was checked (${dateTimePatterns})`);
  t.false(JSON.stringify(doc).includes('$/i'), 'no regex flags leaked into a pattern');
});

test('api.openapi: what the service answers is in the document: 403 on every authenticated operation, 409 on a group in use, 429 on the token endpoint, the usage fields on errors', async (t) => {
  const s = await startServer('sqlite');
  t.teardown(() => s.stop());
  const admin = s.adminToken;
  const doc = (await s.request('GET', '/api/openapi.json')).body as Json;
  const documented = (method: string, path: string, status: number): boolean =>
    String(status) in ((doc.paths as Json)[path]?.[method]?.responses ?? {});

  // A user without any privilege is refused everywhere (docs/rest.md "Decisions"): every operation says so.
  const created = await s.request('POST', '/api/users', {
    token: admin,
    body: { name: 'none', email: 'none@example.com', country: 'ES', timeZone: 'UTC', privileges: [] },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const nobody = await s.token('none@example.com', created.body.apiKey);
  let operations = 0;
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      if (!METHODS.includes(method) || !(op as Json).security?.length) continue;
      operations++;
      const url = path.replace(/\{[^}]+\}/g, 'x');
      const body = ['post', 'put'].includes(method) ? {} : method === 'patch' ? [] : undefined;
      const r = await s.request(method.toUpperCase(), url, { token: nobody, body });
      t.is(r.status, 403, `${method} ${path} with no privilege`);
      t.true(documented(method, path, r.status), `${method} ${path} documents ${r.status}`);
      t.is(typeof r.body.apiUsage, 'number', `${method} ${path}: an authenticated error carries apiUsage`);
    }
  }
  t.true(operations > 40, `every authenticated operation was tried (${operations})`);
  const error = doc.components.schemas.Error as Json;
  for (const field of ['apiUsage', 'apiDailyUsage']) t.truthy(error.properties[field], `the Error schema has ${field}`);

  // A group a user is restricted to: 409.
  const group = (await s.request('POST', '/api/groups', { token: admin, body: { name: 'G' } })).body.id as string;
  await s.request('PATCH', `/api/users/${created.body.id}`, {
    token: admin,
    body: [{ op: 'replace', path: '/group', value: group }],
  });
  const inUse = await s.request('DELETE', `/api/groups/${group}`, { token: admin });
  t.is(inUse.status, 409);
  t.true(documented('delete', '/api/groups/{groupId}', 409));

  // Failed logins from one address: 429 after a few.
  let limited: { status: number } | undefined;
  for (let i = 0; i < 30 && !limited; i++) {
    const r = await s.request('POST', '/api/Auth/Token', { body: { userName: 'nobody', apiKey: `wrong-${i}` } });
    if (r.status === 429) limited = r;
  }
  t.is(limited?.status, 429, 'failed logins are rate limited');
  t.true(documented('post', '/api/Auth/Token', 429));
});
