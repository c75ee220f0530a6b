import { ID_BYTES } from './castel.constants.js';

/** The 20 id bytes at `at` are printable ASCII or NUL padding, as every device writes its id. */
export function isDeviceId(buf: Buffer, at: number): boolean {
  for (let i = at; i < at + ID_BYTES; i++) {
    const c = buf[i];
    if (c !== 0 && (c < 0x20 || c > 0x7e)) return false;
  }
  return true;
}
