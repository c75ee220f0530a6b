import { ByteReader } from '../shared/byte-reader.js';
import { ID_BYTES } from './castel.constants.js';

/**
 * The shared bounds-checked reader with the little-endian integers Castel bodies are written in
 * (only the message type is big-endian). Reading past the end throws a ProtocolError.
 */
export class LeReader extends ByteReader {
  u16le(): number {
    return this.bytes(2).readUInt16LE(0);
  }

  i16le(): number {
    return this.bytes(2).readInt16LE(0);
  }

  u32le(): number {
    return this.bytes(4).readUInt32LE(0);
  }

  i32le(): number {
    return this.bytes(4).readInt32LE(0);
  }
}

/** The 20 id bytes at `at` are printable ASCII or NUL padding, as every device writes its id. */
export function isDeviceId(buf: Buffer, at: number): boolean {
  for (let i = at; i < at + ID_BYTES; i++) {
    const c = buf[i];
    if (c !== 0 && (c < 0x20 || c > 0x7e)) return false;
  }
  return true;
}
