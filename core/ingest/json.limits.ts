/**
 * Bounds on client JSON, checked where it enters (REST bodies, MQTT payloads) before anything
 * looks inside it. Both are about what the rest of the system can handle, not about taste:
 * - nesting: JSON.stringify, zod and the JSON of every answer recurse; a value 6,000 levels deep
 *   overflows the stack when a location is serialised for storage (V8's JSON.stringify gives up
 *   near 5,000 levels), so 32 levels is far more than any location attribute needs;
 * - NUL (U+0000): PostgreSQL `text` and `jsonb` cannot hold it ("invalid byte sequence",
 *   "unsupported Unicode escape sequence"), so a string carrying it could never be stored.
 * The walk is iterative: a hostile value cannot overflow the stack of the check itself.
 */

/** Deepest nesting of objects and arrays a client value may have (the value itself is level 1). */
export const MAX_JSON_DEPTH = 32;

/** Largest `attributes` object of a location, as JSON text (bytes of UTF-16 code units, near enough). */
export const MAX_ATTRIBUTES_JSON = 16_384;

export interface JsonProblem {
  /** where, as a dotted path (`location.attributes.note`); empty for the value itself */
  field: string;
  message: string;
}

interface Frame {
  value: unknown;
  depth: number;
  key: string | number | null;
  parent: Frame | null;
}

function pathOf(f: Frame | null): string {
  const parts: (string | number)[] = [];
  for (let p = f; p && p.key !== null; p = p.parent) parts.push(p.key);
  return parts.reverse().join('.');
}

/**
 * The first reason `value` (already parsed JSON) may not be accepted: too deep, or a string or
 * key holding NUL; undefined when it is fine.
 */
export function jsonInputProblem(value: unknown, maxDepth = MAX_JSON_DEPTH): JsonProblem | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? { field: '', message: NUL_MESSAGE } : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  const stack: Frame[] = [{ value, depth: 1, key: null, parent: null }];
  while (stack.length) {
    const f = stack.pop()!;
    if (f.depth > maxDepth)
      return { field: pathOf(f), message: `nests deeper than ${maxDepth} levels of objects and arrays` };
    const v = f.value;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const item = v[i];
        if (typeof item === 'string') {
          if (item.includes('\u0000'))
            return { field: pathOf({ value: item, depth: f.depth, key: i, parent: f }), message: NUL_MESSAGE };
        } else if (typeof item === 'object' && item !== null)
          stack.push({ value: item, depth: f.depth + 1, key: i, parent: f });
      }
      continue;
    }
    for (const key in v as Record<string, unknown>) {
      const item = (v as Record<string, unknown>)[key];
      if (key.includes('\u0000')) return { field: pathOf(f), message: `has a key that ${NUL_MESSAGE}` };
      if (typeof item === 'string') {
        if (item.includes('\u0000'))
          return { field: pathOf({ value: item, depth: f.depth, key, parent: f }), message: NUL_MESSAGE };
      } else if (typeof item === 'object' && item !== null)
        stack.push({ value: item, depth: f.depth + 1, key, parent: f });
    }
  }
  return undefined;
}

const NUL_MESSAGE = 'holds a NUL character (\\u0000), which cannot be stored';

/**
 * The length of `value` as JSON text, counted without building it and without recursion; stops
 * counting past `limit` (returns a number above it). Values JSON cannot show count as `null`.
 */
export function jsonLength(value: unknown, limit = Number.MAX_SAFE_INTEGER): number {
  let n = 0;
  const stack: unknown[] = [value];
  while (stack.length && n <= limit) {
    const v = stack.pop();
    if (typeof v === 'string') n += v.length + 2;
    else if (typeof v === 'number') n += Number.isFinite(v) ? String(v).length : 4;
    else if (typeof v === 'boolean') n += v ? 4 : 5;
    else if (Array.isArray(v)) {
      n += 2 + Math.max(0, v.length - 1);
      for (const item of v) stack.push(item);
    } else if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v);
      n += 2 + Math.max(0, keys.length - 1);
      for (const k of keys) {
        n += k.length + 3;
        stack.push((v as Record<string, unknown>)[k]);
      }
    } else n += 4;
  }
  return n;
}
