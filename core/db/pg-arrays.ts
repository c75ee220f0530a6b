/**
 * One-dimensional PostgreSQL arrays in the binary wire format, as query parameters (pg sends a
 * Buffer parameter in binary). The batched writes pass each column as one array and `unnest` it:
 * in binary the server copies each element as it is, where the text form (`{"…","…"}`) costs an
 * escaping pass here and a character-by-character parse there, several times the insert itself for
 * rows of JSON text. Format: ndim, has-nulls flag, element type oid, then per dimension its
 * length and lower bound, then per element its byte length (-1: NULL) and its bytes.
 */
const TEXT_OID = 25;
const INT8_OID = 20;

function header(size: number, elementOid: number, length: number, hasNulls: boolean): { out: Buffer; offset: number } {
  const out = Buffer.allocUnsafe(length === 0 ? 12 : size);
  let o = out.writeInt32BE(length === 0 ? 0 : 1, 0);
  o = out.writeInt32BE(hasNulls ? 1 : 0, o);
  o = out.writeUInt32BE(elementOid, o);
  if (length === 0) return { out, offset: o };
  o = out.writeInt32BE(length, o);
  o = out.writeInt32BE(1, o);
  return { out, offset: o };
}

/** A `text[]` parameter (null and undefined elements are NULL). */
export function pgTextArray(values: readonly (string | null | undefined)[]): Buffer {
  let size = 20;
  let hasNulls = false;
  for (const v of values) {
    if (v == null) hasNulls = true;
    size += 4 + (v == null ? 0 : Buffer.byteLength(v, 'utf8'));
  }
  const { out, offset } = header(size, TEXT_OID, values.length, hasNulls);
  let o = offset;
  for (const v of values) {
    if (v == null) {
      o = out.writeInt32BE(-1, o);
      continue;
    }
    const n = out.write(v, o + 4, 'utf8');
    out.writeInt32BE(n, o);
    o += 4 + n;
  }
  return out;
}

/** An `int8[]` parameter; throws a RangeError for a value that is not an integer. */
export function pgInt8Array(values: readonly number[]): Buffer {
  const { out, offset } = header(20 + values.length * 12, INT8_OID, values.length, false);
  let o = offset;
  for (const v of values) {
    o = out.writeInt32BE(8, o);
    o = out.writeBigInt64BE(BigInt(v), o);
  }
  return out;
}
