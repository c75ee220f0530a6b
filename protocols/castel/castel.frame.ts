import { type Step, steppedSplitter } from '../shared/stepped-frames.js';
import type { FrameSplitter } from '../types.js';
import { HEADER_AT, HEADER_DOLLAR, ID_BYTES, MAX_FRAME_BYTES, MIN_FRAME_BYTES } from './castel.constants.js';
import { isDeviceId } from './castel.reader.js';

const isHeader = (buf: Buffer, pos: number): boolean => {
  const h = (buf[pos] << 8) | buf[pos + 1];
  return h === HEADER_AT || h === HEADER_DOLLAR;
};

/**
 * Traccar cuts Castel streams by the length field alone (offset 2, u16 LE, the whole frame). Here a
 * frame must also start with `@@` or `$$`, declare at least the shortest frame and hold a device id
 * of ASCII and NUL padding, so bytes that cannot start one (a stray `$$` before a real frame) are
 * skipped one at a time until one can.
 */
function nextStep(buf: Buffer, pos: number, maxFrameBytes: number): Step {
  const avail = buf.length - pos;
  if (buf[pos] !== 0x40 && buf[pos] !== 0x24) return { skip: 1 };
  if (avail < 2) return { wait: true };
  if (!isHeader(buf, pos)) return { skip: 1 };
  if (avail < 4) return { wait: true };
  const length = buf.readUInt16LE(pos + 2);
  if (length < MIN_FRAME_BYTES || length > maxFrameBytes) return { skip: 1 };
  const idAt = pos + (buf[pos] === 0x40 ? 5 : 4);
  if (avail < idAt - pos + ID_BYTES) return { wait: true };
  if (!isDeviceId(buf, idAt)) return { skip: 1 };
  return avail >= length ? { frame: length } : { wait: true };
}

export function createCastelSplitter(maxFrameBytes = MAX_FRAME_BYTES): FrameSplitter {
  return steppedSplitter(nextStep, maxFrameBytes);
}
