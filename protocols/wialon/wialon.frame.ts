import type { FrameSplitter } from '../types.js';
import { createLineSplitter } from '../shared/line-frames.js';
import { MAX_FRAME_BYTES } from './wialon.constants.js';

/** Wialon IPS over TCP: one packet a line, ended by CR LF (a bare LF is taken too, as Traccar does). */
export function createWialonSplitter(maxFrameBytes = MAX_FRAME_BYTES): FrameSplitter {
  return createLineSplitter(maxFrameBytes);
}
