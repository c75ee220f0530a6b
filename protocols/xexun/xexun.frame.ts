import type { FrameSplitter } from '../types.js';
import { EMPTY, restOf } from '../shared/empty.js';
import { XEXUN_MAX_FRAME_BYTES } from './xexun.constants.js';

/**
 * `auto` (the gateway's): a line that starts with the full format's `<serial>,<phone>,` before its
 * RMC sentence is cut whole at its line feed, so either decoder mode finds what it reads in it; a
 * record that starts at its RMC sentence is cut as Traccar's basic frame decoder cuts it. `basic`:
 * always the basic cut (XexunFrameDecoder), whatever comes before the RMC sentence being dropped.
 */
export type XexunSplitMode = 'auto' | 'basic';

const LF = 0x0a;
const CR = 0x0d;
const COMMA = 0x2c;
/** `<serial digits>,<phone>,` right before the RMC sentence: a full line */
const FULL_PREFIX = /^\d+,[^,\r\n]*,$/;

/** first `GPRMC` or `GNRMC` from `from`, or -1 */
function rmcAt(buf: Buffer, from: number): number {
  const p = buf.indexOf('GPRMC', from, 'latin1');
  const n = buf.indexOf('GNRMC', from, 'latin1');
  return p < 0 ? n : n < 0 ? p : Math.min(p, n);
}

/** end (exclusive) of the basic record at `rmc`: the comma after `imei:`; -1 while incomplete */
function basicEnd(buf: Buffer, rmc: number): number {
  const imei = buf.indexOf('imei:', rmc, 'latin1');
  if (imei < 0) return -1;
  const comma = buf.indexOf(COMMA, imei);
  return comma < 0 ? -1 : comma + 1;
}

/** the line from `start` to `lf`, without its CR; undefined when it holds nothing to decode */
function lineAt(buf: Buffer, start: number, lf: number): Buffer | undefined {
  let end = lf;
  while (end > start && buf[end - 1] === CR) end--;
  return end > start ? Buffer.from(buf.subarray(start, end)) : undefined;
}

interface Cut {
  frame?: Buffer;
  /** where the next record starts; undefined: wait for more bytes */
  next?: number;
}

/** The record at `start` (line ends before it skipped). */
function cut(buf: Buffer, start: number, mode: XexunSplitMode): Cut {
  const rmc = rmcAt(buf, start);
  const lf = buf.indexOf(LF, start);
  if (mode === 'auto' && (rmc < 0 || (lf >= 0 && lf < rmc))) {
    if (lf < 0) return {};
    // a line without RMC is kept only when it names its device (a status line); else dropped
    const line = lineAt(buf, start, lf);
    return { frame: line?.includes('imei:') ? line : undefined, next: lf + 1 };
  }
  if (rmc < 0) return {};
  const prefix = buf.toString('latin1', start, rmc);
  if (mode === 'auto' && FULL_PREFIX.test(prefix)) {
    if (lf < 0) return {};
    return { frame: lineAt(buf, start, lf), next: lf + 1 };
  }
  const end = basicEnd(buf, rmc);
  return end < 0 ? {} : { frame: Buffer.from(buf.subarray(rmc, end)), next: end };
}

/**
 * Cuts Xexun records from the stream. The decoder mode is a device setting, unknown until the
 * device is, so `auto` tells the two formats apart by what precedes each RMC sentence (see
 * XexunSplitMode). More than maxFrameBytes waiting without a record: the bytes are dropped.
 */
export function createXexunSplitter(
  maxFrameBytes = XEXUN_MAX_FRAME_BYTES,
  mode: XexunSplitMode = 'auto',
): FrameSplitter {
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
        while (pos < buf.length && (buf[pos] === CR || buf[pos] === LF)) pos++;
        if (pos >= buf.length) break;
        const c = cut(buf, pos, mode);
        if (c.next === undefined) break;
        if (c.frame && c.frame.length <= maxFrameBytes) frames.push(c.frame);
        pos = c.next;
      }
      pending = buf.length - pos > maxFrameBytes ? EMPTY : restOf(buf, pos);
      return frames;
    },
  };
}
