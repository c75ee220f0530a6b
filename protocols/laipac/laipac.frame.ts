import type { FrameSplitter } from '../types.js';
import { createLineSplitter } from '../shared/line-frames.js';
import { MAX_FRAME_BYTES } from './laipac.constants.js';

/** Laipac over TCP: one sentence a line, ended by CR LF or LF. */
export function createLaipacSplitter(maxFrameBytes = MAX_FRAME_BYTES): FrameSplitter {
  return createLineSplitter(maxFrameBytes);
}
