/**
 * JSON Patch (RFC 6902) for PATCH: applied to the resource as GET shows it, then validated like PUT.
 * Operations multiply (thirty `copy` ops can double a document thirty times), so a patch is bounded
 * before each one runs: at most MAX_PATCH_OPS operations, and the values it places add up to at most
 * `maxPlacedBytes` of JSON (413, nothing changed; docs/rest.md). A value is measured only up to what
 * is left of the budget (jsonLength), so refusing a huge copy is cheap. `move` and `copy` are done
 * here as remove/add: fast-json-patch's own clone the whole document for every such op.
 */
import { isDeepStrictEqual } from 'node:util';
import fjp, { type Operation, type Validator } from 'fast-json-patch';
import { DomainError } from '../core/errors.js';
import { jsonLength } from '../core/ingest/json.limits.js';

export interface PatchOp {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}

/** Operations one patch may have: far more than a change of one resource needs, few enough to answer at once. */
export const MAX_PATCH_OPS = 1000;

function checkReadOnlyPaths(ops: PatchOp[], readOnly: readonly string[]): void {
  for (const [i, op] of ops.entries()) {
    for (const p of [op.path, op.from]) {
      const top = p?.split('/')[1];
      if (top && readOnly.includes(top) && op.op !== 'test') {
        throw new DomainError('VALIDATION_FAILED', `[${i}].path: "${top}" is read-only.`, { field: `[${i}].path` });
      }
    }
  }
}

/** The value a JSON Pointer (RFC 6901) names in `doc`, walked without cloning; `found: false` when there is none. */
function valueAt(doc: unknown, pointer: string): { found: boolean; value?: unknown } {
  if (pointer === '') return { found: true, value: doc };
  if (!pointer.startsWith('/')) return { found: false };
  let v = doc;
  for (const token of pointer.slice(1).split('/')) {
    const key = token.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(v)) {
      if (!/^(0|[1-9]\d*)$/.test(key) || Number(key) >= v.length) return { found: false };
      v = v[Number(key)];
    } else if (typeof v === 'object' && v !== null && Object.hasOwn(v, key)) {
      v = (v as Record<string, unknown>)[key];
    } else return { found: false };
  }
  return { found: true, value: v };
}

/** The value a `copy` or `move` takes; a 400 naming `from` when there is none. */
function source(doc: unknown, op: PatchOp, i: number): unknown {
  const at = op.from === undefined ? { found: false } : valueAt(doc, op.from);
  if (!at.found)
    throw new DomainError('VALIDATION_FAILED', `[${i}].from: there is no value at "${op.from ?? ''}".`, {
      field: `[${i}].from`,
    });
  return at.value;
}

/** The bytes of JSON the operation puts into the document, counted up to `left` (a number above it when more). */
function placedBytes(doc: unknown, op: PatchOp, i: number, left: number): number {
  switch (op.op) {
    case 'add':
    case 'replace':
      return op.value === undefined ? 0 : jsonLength(op.value, left);
    case 'copy':
    case 'move':
      return jsonLength(source(doc, op, i), left);
    default:
      return 0;
  }
}

/** fast-json-patch's checks, reporting this operation's index; `placed` skips the walk of a value taken from the document. */
function validatorAt(i: number, placed = false): Validator<unknown> {
  return (operation, _index, document, existingPath) =>
    fjp.validator(placed ? ({ ...operation, value: null } as Operation) : operation, i, document, existingPath);
}

function applyOne(doc: unknown, op: PatchOp, i: number): unknown {
  if (op.op === 'copy') {
    const value = structuredClone(source(doc, op, i));
    return fjp.applyOperation(doc, { op: 'add', path: op.path, value }, validatorAt(i, true), true, true, i)
      .newDocument;
  }
  if (op.op === 'move') {
    const from = op.from ?? '';
    if (from === op.path) return doc;
    if (from === '' || op.path.startsWith(`${from}/`)) {
      throw new DomainError('VALIDATION_FAILED', `[${i}].from: a value cannot be moved into itself.`, {
        field: `[${i}].from`,
      });
    }
    const { removed } = fjp.applyOperation(doc, { op: 'remove', path: from }, validatorAt(i), true, true, i);
    return fjp.applyOperation(doc, { op: 'add', path: op.path, value: removed }, validatorAt(i, true), true, true, i)
      .newDocument;
  }
  return fjp.applyOperation(doc, op as Operation, validatorAt(i), true, true, i).newDocument;
}

function patchFailure(e: unknown, i: number): DomainError {
  if (e instanceof DomainError) return e;
  const err = e as { name?: string; message?: string };
  if (err.name === 'TEST_OPERATION_FAILED') {
    return new DomainError('PATCH_FAILED', `[${i}]: the "test" operation failed, so nothing was changed.`);
  }
  return new DomainError('VALIDATION_FAILED', `[${i}]: ${(err.message ?? 'invalid operation').split('\n')[0]}`);
}

function tooMuch(i: number, maxPlacedBytes: number): DomainError {
  return new DomainError(
    'PAYLOAD_TOO_LARGE',
    `[${i}]: the patch would place more than ${maxPlacedBytes} bytes of JSON into the document (the values of its add, replace, copy and move operations together; the limit is TRACKGATE_BODY_LIMIT); nothing was changed. Send the new value with PUT, or fewer copies.`,
    { field: `[${i}]`, limitBytes: maxPlacedBytes },
  );
}

/**
 * The patched document. Read-only fields may not change, whichever operation or path would change
 * them: a path naming one is refused up front (the clearer message), and the result is compared
 * with the original, which also catches a whole-document replace (`"path": ""`) or a `move` into one.
 * A whole-document replace that leaves read-only fields out keeps their values.
 */
export function applyJsonPatch<T extends object>(
  doc: T,
  ops: PatchOp[],
  readOnly: readonly string[],
  maxPlacedBytes: number,
): Record<string, unknown> {
  if (ops.length > MAX_PATCH_OPS) {
    throw new DomainError(
      'VALIDATION_FAILED',
      `body: a patch has at most ${MAX_PATCH_OPS} operations (this one has ${ops.length}).`,
      { field: 'body' },
    );
  }
  checkReadOnlyPaths(ops, readOnly);
  let patched: unknown = structuredClone(doc);
  let placed = 0;
  for (const [i, op] of ops.entries()) {
    try {
      placed += placedBytes(patched, op, i, maxPlacedBytes - placed);
      if (placed > maxPlacedBytes) throw tooMuch(i, maxPlacedBytes);
      patched = applyOne(patched, op, i);
    } catch (e) {
      throw patchFailure(e, i);
    }
  }
  if (typeof patched !== 'object' || patched === null || Array.isArray(patched)) {
    throw new DomainError('VALIDATION_FAILED', 'The patched document must stay an object.');
  }
  const result = patched as Record<string, unknown>;
  const original = doc as Record<string, unknown>;
  for (const key of readOnly) {
    if (!(key in result) && key in original) result[key] = original[key];
    else if (!isDeepStrictEqual(result[key], original[key])) {
      throw new DomainError('VALIDATION_FAILED', `"${key}" is read-only; the patch may not change it.`, { field: key });
    }
  }
  return result;
}
