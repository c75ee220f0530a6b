import type { FrameSplitter } from '../types.js';
import { createDelimitedSplitter } from '../shared/delimited-frames.js';
import { FRAME_DELIMITER, MAX_FRAME_BYTES } from './tlt2h.constants.js';

/** TLT-2H over TCP: a message of several lines ends with `##\r\n`, which is dropped (Tlt2hProtocol). */
export function createTlt2hSplitter(maxFrameBytes = MAX_FRAME_BYTES): FrameSplitter {
  return createDelimitedSplitter(Buffer.from(FRAME_DELIMITER, 'latin1'), maxFrameBytes);
}
