/** JSON Patch (RFC 6902) for PATCH: applied to the resource as GET shows it, then validated like PUT. */
import { isDeepStrictEqual } from 'node:util';
import fjp from 'fast-json-patch';
import { DomainError } from '../core/errors.js';

export interface PatchOp {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}

/**
 * The patched document. Read-only fields may not change, whichever operation or path would change
 * them: a path naming one is refused up front (the clearer message), and the result is compared
 * with the original, which also catches a whole-document replace (`"path": ""`) or a `move` into one.
 * A whole-document replace that leaves read-only fields out keeps their values.
 */
export function applyJsonPatch<T extends object>(doc: T, ops: PatchOp[], readOnly: readonly string[]): Record<string, unknown> {
  for (const [i, op] of ops.entries()) {
    for (const p of [op.path, op.from]) {
      const top = p?.split('/')[1];
      if (top && readOnly.includes(top) && op.op !== 'test') {
        throw new DomainError('VALIDATION_FAILED', `[${i}].path: "${top}" is read-only.`, { field: `[${i}].path` });
      }
    }
  }
  let patched: unknown;
  try {
    patched = fjp.applyPatch(structuredClone(doc), ops as fjp.Operation[], true, true).newDocument;
  } catch (e) {
    const err = e as { name?: string; message?: string; index?: number };
    if (err.name === 'TEST_OPERATION_FAILED') {
      throw new DomainError('PATCH_FAILED', `[${err.index ?? 0}]: the "test" operation failed, so nothing was changed.`);
    }
    const reason = (err.message ?? 'invalid operation').split('\n')[0];
    throw new DomainError('VALIDATION_FAILED', `[${err.index ?? 0}]: ${reason}`);
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
