import test from 'ava';
import { ByteReader } from '../../../protocols/shared/byte-reader.js';
import { ProtocolError } from '../../../protocols/types.js';

const u64Bytes = (v: bigint): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(v);
  return b;
};

test('byte-reader: u64Number gives what Number(u64()) gives, exact to 2^53 and rounded alike beyond', (t) => {
  const values = [
    0n,
    1n,
    0xffff_ffffn,
    0x1_0000_0000n,
    1735689600000n,
    2n ** 53n - 1n,
    2n ** 53n,
    2n ** 53n + 1n,
    2n ** 53n + 3n,
    2n ** 63n + 1025n,
    2n ** 64n - 1n,
  ];
  for (let i = 0; i < 2000; i++)
    values.push(
      BigInt.asUintN(
        64,
        BigInt(Math.floor(Math.random() * 2 ** 32)) * 2n ** 32n + BigInt(Math.floor(Math.random() * 2 ** 32)),
      ),
    );
  for (const v of values) {
    const b = u64Bytes(v);
    const r = new ByteReader('test', b);
    t.is(r.u64Number(), Number(new ByteReader('test', b).u64()), `0x${v.toString(16)}`);
    t.is(r.remaining, 0);
  }
});

test('byte-reader: u64Number of a truncated field is a ProtocolError', (t) => {
  t.throws(() => new ByteReader('test', Buffer.alloc(7)).u64Number(), { instanceOf: ProtocolError });
});

test('byte-reader: transient gives the next bytes, in one shared buffer per width of 1, 2 and 4, and a view of its own otherwise', (t) => {
  const bytes = Buffer.from(Array.from({ length: 20 }, (_, i) => i));
  const r = new ByteReader('test', bytes, 1);
  t.deepEqual([...r.transient(1)], [1]);
  t.deepEqual([...r.transient(2)], [2, 3]);
  const four = r.transient(4);
  t.deepEqual([...four], [4, 5, 6, 7]);
  t.is(r.transient(4), four, 'the same buffer again, overwritten');
  t.deepEqual([...four], [8, 9, 10, 11]);
  const eight = r.transient(8);
  t.deepEqual([...eight], [12, 13, 14, 15, 16, 17, 18, 19]);
  t.is(eight.buffer, bytes.buffer, 'a view of the frame, which the caller may keep');
  t.is(r.remaining, 0);
  const e = t.throws(() => new ByteReader('test', bytes, 18).transient(4, 'io 7'), { instanceOf: ProtocolError });
  t.regex(e!.message, /truncated io 7/);
  const short = new ByteReader('test', bytes, 18);
  t.throws(() => short.transient(4), { instanceOf: ProtocolError });
  t.is(short.remaining, 2, 'nothing read when it throws');
});

test('byte-reader: little-endian reads, peek, and a truncated one is a ProtocolError at its offset', (t) => {
  const buf = Buffer.from('0102fffe78563412feffffff0000803f0100000000000080', 'hex');
  const r = new ByteReader('test', buf);
  t.is(r.peek(), 0x01);
  t.is(r.u16le(), 0x0201);
  t.is(r.i16le(), -257);
  t.is(r.u32le(), 0x12345678);
  t.is(r.i32le(), -2);
  t.is(r.f32le(), 1);
  t.is(r.offset, 16);
  t.is(r.i64le(), Number(-(2n ** 63n) + 1n));
  t.is(r.peek(), undefined);
  const short = new ByteReader('test', Buffer.from('0102', 'hex'), 1);
  t.throws(() => short.u16le(), {
    instanceOf: ProtocolError,
    message: /truncated field at offset 1 \(need 2, have 1\)/,
  });
  t.is(short.u8(), 2, 'a failed read consumes nothing');
});
