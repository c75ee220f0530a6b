import type { FrameSplitter } from '../types.js';
import { createDelimitedSplitter } from '../shared/delimited-frames.js';
import { FRAME_DELIMITER, MAX_FRAME_BYTES } from './trv.constants.js';

/** TRV over TCP: every message ends with `#`, which is dropped (TrvProtocol's delimiter decoder). */
export function createTrvSplitter(maxFrameBytes = MAX_FRAME_BYTES): FrameSplitter {
  return createDelimitedSplitter(Buffer.from(FRAME_DELIMITER, 'latin1'), maxFrameBytes);
}
