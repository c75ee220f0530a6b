import type { FrameSplitter } from '../types.js';
import { EMPTY, restOf } from '../shared/empty.js';
import { TOTEM_MAX_FRAME_BYTES } from './totem.constants.js';

const DOLLAR = 0x24;
const ZERO = 0x30;
/** `$$` and the longer (new-format) length field */
const HEAD_BYTES = 6;

/**
 * The length a frame at `start` announces (it counts the whole frame, not the CR LF after it):
 * 4 decimal digits after `$$0…`, else 2 hex digits; -1 when the field is not digits or names a
 * frame shorter than its own header.
 */
function announced(buf: Buffer, start: number): number {
  const isNew = buf[start + 2] === ZERO;
  const field = buf.toString('latin1', start + 2, start + (isNew ? 6 : 4));
  const ok = isNew ? /^\d{4}$/.test(field) : /^[0-9a-fA-F]{2}$/.test(field);
  const length = ok ? parseInt(field, isNew ? 10 : 16) : -1;
  return length >= HEAD_BYTES ? length : -1;
}

/**
 * Cuts Totem frames (TotemFrameDecoder): skips to `$$`, reads the length field and cuts that many
 * bytes, so the CR LF after a frame is skipped as garbage before the next one. A `$$` whose
 * length field is not digits is passed over. A frame longer than maxFrameBytes is given up.
 */
export function createTotemSplitter(maxFrameBytes = TOTEM_MAX_FRAME_BYTES): FrameSplitter {
  let pending: Buffer = EMPTY;
  return {
    get buffered() {
      return pending.length;
    },
    push(chunk: Buffer): Buffer[] {
      const buf = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      const frames: Buffer[] = [];
      let pos = 0;
      for (;;) {
        const start = buf.indexOf('$$', pos, 'latin1');
        if (start < 0) {
          // a lone `$` at the end may be the first half of the next `$$`
          pos = buf.length > 0 && buf[buf.length - 1] === DOLLAR ? buf.length - 1 : buf.length;
          break;
        }
        if (buf.length - start < HEAD_BYTES) {
          pos = start;
          break;
        }
        const length = announced(buf, start);
        if (length < 0 || length > maxFrameBytes) {
          pos = start + 1;
          continue;
        }
        if (buf.length - start < length) {
          pos = start;
          break;
        }
        frames.push(Buffer.from(buf.subarray(start, start + length)));
        pos = start + length;
      }
      pending = restOf(buf, Math.max(pos, 0));
      return frames;
    },
  };
}
