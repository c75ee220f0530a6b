/** JSON Patch (RFC 6902) for PATCH: applied to the resource as GET shows it, then validated like PUT. */
import fjp from 'fast-json-patch';
import { DomainError } from '../core/errors.js';

export interface PatchOp {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}

export function applyJsonPatch<T extends object>(doc: T, ops: PatchOp[], readOnly: readonly string[]): Record<string, unknown> {
  for (const [i, op] of ops.entries()) {
    for (const p of [op.path, op.from]) {
      const top = p?.split('/')[1];
      if (top && readOnly.includes(top) && op.op !== 'test') {
        throw new DomainError('VALIDATION_FAILED', `[${i}].path: "${top}" is read-only.`, { field: `[${i}].path` });
      }
    }
  }
  try {
    return fjp.applyPatch(structuredClone(doc), ops as fjp.Operation[], true, true).newDocument as Record<string, unknown>;
  } catch (e) {
    const err = e as { name?: string; message?: string; index?: number };
    if (err.name === 'TEST_OPERATION_FAILED') {
      throw new DomainError('PATCH_FAILED', `[${err.index ?? 0}]: the "test" operation failed, so nothing was changed.`);
    }
    const reason = (err.message ?? 'invalid operation').split('\n')[0];
    throw new DomainError('VALIDATION_FAILED', `[${err.index ?? 0}]: ${reason}`);
  }
}
