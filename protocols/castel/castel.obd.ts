import { ProtocolError } from '../types.js';
import { PROTOCOL } from './castel.constants.js';
import type { ByteReader } from '../shared/byte-reader.js';

/** Value width in bytes of each OBD-II PID the device reports (CastelProtocolDecoder PID_LENGTH_MAP). */
const PID_BYTES = new Map<number, 1 | 2 | 4>();
const widths: ReadonlyArray<[1 | 2 | 4, number[]]> = [
  [
    1,
    [
      0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0b, 0x0d, 0x0e, 0x0f, 0x11, 0x12, 0x13, 0x1c, 0x1d, 0x1e, 0x2c, 0x2d, 0x2e,
      0x2f, 0x30, 0x33, 0x43, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x4b, 0x4c, 0x51, 0x52, 0x5a,
    ],
  ],
  [
    2,
    [
      0x02, 0x03, 0x0a, 0x0c, 0x10, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1f, 0x21, 0x22, 0x23, 0x31, 0x32,
      0x3c, 0x3d, 0x3e, 0x3f, 0x42, 0x44, 0x4d, 0x4e, 0x50, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x9d,
    ],
  ],
  [
    4,
    [
      0x00, 0x01, 0x20, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x3b,
      0x40, 0x41, 0x4f, 0x67, 0xa6,
    ],
  ],
];
for (const [width, pids] of widths) for (const pid of pids) PID_BYTES.set(pid, width);

/**
 * The PIDs kept as attributes, by Traccar's keys (ObdDecoder.decodeData). The device sends them
 * already converted (°C, %, rpm, km/h, km), so the value is kept as sent.
 */
const PID_KEYS: Readonly<Record<number, string>> = {
  0x04: 'engineLoad',
  0x05: 'coolantTemp',
  0x0b: 'mapIntake',
  0x0c: 'rpm',
  0x0d: 'obdSpeed',
  0x0f: 'intakeTemp',
  0x11: 'throttle',
  0x21: 'milDistance',
  0x2f: 'fuel',
  0x31: 'clearedDistance',
};

/**
 * An OBD data block: `count u8 | count × PID u16 LE (low byte) | [group count u8, group size u8] |
 * one value per PID`. A PID of unknown width makes the rest unreadable, as in Traccar.
 */
export function decodeObdValues(r: ByteReader, attributes: Record<string, number>, groups: boolean): void {
  const count = r.u8();
  const pids: number[] = [];
  for (let i = 0; i < count; i++) pids.push(r.u16le() & 0xff);
  if (groups) r.skip(2); // group count, group size: only the first group is read
  for (const pid of pids) {
    const width = PID_BYTES.get(pid);
    if (width === undefined)
      throw new ProtocolError(PROTOCOL, `unknown PID 0x${pid.toString(16).padStart(2, '0')}`, r.buf);
    const value = width === 1 ? r.u8() : width === 2 ? r.u16le() : r.i32le();
    const key = PID_KEYS[pid];
    if (key !== undefined) attributes[key] = value;
  }
}

/** A diagnostic trouble code as SAE J2012 writes it: a letter from the top 2 bits, then 4 hex digits. */
export function troubleCode(value: number): string {
  const letter = 'PCBU'[(value >> 14) & 3];
  return letter + (value & 0x3fff).toString(16).toUpperCase().padStart(4, '0');
}
