import type { FrameSplitter } from '../types.js';
import { ESCAPE, FRAME_END, FRAME_START, MAX_FRAME_BYTES, UNESCAPED } from './watch.constants.js';
import { EMPTY } from '../shared/empty.js';

/** Frame bytes with `}` escapes resolved (`7D 01` -> `}`, `7D 02` -> `[`, ... WatchFrameDecoder). An unknown escape is kept as it is. */
export function unescapeFrame(frame: Buffer): Buffer {
  if (!frame.includes(ESCAPE)) return frame;
  const out = Buffer.alloc(frame.length);
  let n = 0;
  for (let i = 0; i < frame.length; i++) {
    const mapped = frame[i] === ESCAPE && i + 1 < frame.length ? UNESCAPED[frame[i + 1]] : undefined;
    if (mapped !== undefined) {
      out[n++] = mapped;
      i++;
    } else {
      out[n++] = frame[i];
    }
  }
  return out.subarray(0, n);
}

/**
 * Cuts a watch byte stream into `[`…`]` frames, unescaped. Brackets nest: a Wi-Fi name such as
 * `[LG_Wall-Mount A/C]e725` inside a UD report does not end it (binary data is escaped, so only
 * text brackets are seen raw). Bytes before a `[` are skipped; a frame that grows past
 * `maxFrameBytes` without closing is dropped and the search resumes at the next `[` after its start.
 */
export function createWatchSplitter(maxFrameBytes = MAX_FRAME_BYTES): FrameSplitter {
  let buf: Buffer = EMPTY;
  /** where the scan of the open frame resumes, and its bracket depth there */
  let scanned = 0;
  let depth = 0;
  const reset = (): void => {
    scanned = 0;
    depth = 0;
  };
  return {
    get buffered() {
      return buf.length;
    },
    push(chunk: Buffer): Buffer[] {
      buf = buf.length ? Buffer.concat([buf, chunk]) : Buffer.from(chunk);
      const frames: Buffer[] = [];
      for (;;) {
        const start = buf.indexOf(FRAME_START);
        if (start < 0) {
          buf = EMPTY;
          reset();
          break;
        }
        if (start > 0) {
          buf = buf.subarray(start);
          reset();
        }
        let end = -1;
        let i = Math.max(scanned, 0);
        for (; i < buf.length; i++) {
          if (buf[i] === FRAME_START) depth++;
          else if (buf[i] === FRAME_END && --depth === 0) {
            end = i;
            break;
          }
        }
        if (end >= 0) {
          if (end + 1 <= maxFrameBytes) frames.push(unescapeFrame(Buffer.from(buf.subarray(0, end + 1))));
          buf = buf.subarray(end + 1);
          reset();
          continue;
        }
        if (buf.length > maxFrameBytes) {
          buf = buf.subarray(1);
          reset();
          continue;
        }
        scanned = i;
        break;
      }
      if (buf.length === 0) buf = EMPTY;
      return frames;
    },
  };
}
