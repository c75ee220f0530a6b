import type { FrameSplitter } from '../types.js';
import { CODEC_8, CODEC_8_EXT, CODEC_12, CODEC_13, CODEC_16, CODEC_GH3000 } from './teltonika.constants.js';
import { type Step, steppedSplitter } from '../shared/stepped-frames.js';

/**
 * Teltonika sends nothing longer than a few kB (an FMB AVL packet is at most 1280 bytes, FM6x/FMC
 * packets with BLE data a few times that); 64 KiB leaves room while keeping a bad length field bounded.
 */
export const TELTONIKA_MAX_FRAME_BYTES = 65536;

/** An IMEI login is `00 0F` + 15 ASCII digits; a login frame outside these bounds is taken for garbage. */
const MIN_LOGIN_ID_BYTES = 8;
const MAX_LOGIN_ID_BYTES = 32;
const KNOWN_CODECS = new Set([CODEC_GH3000, CODEC_8, CODEC_8_EXT, CODEC_12, CODEC_13, CODEC_16]);

const digits = (buf: Buffer, from: number, to: number): boolean => {
  for (let i = from; i < to; i++) if (buf[i] < 0x30 || buf[i] > 0x39) return false;
  return true;
};

/**
 * TeltonikaFrameDecoder: `FF` ping (1 byte), `u16 len > 0 | len digits` IMEI login, or
 * `00000000 | u32 dataLen | data | u32 CRC` (dataLen + 12 bytes). Bytes that cannot start one of
 * these are skipped one at a time until a plausible frame start is found.
 */
function nextStep(buf: Buffer, pos: number, maxFrameBytes: number): Step {
  const avail = buf.length - pos;
  if (buf[pos] === 0xff) return { frame: 1 };
  if (avail < 2) return { wait: true };
  const len = buf.readUInt16BE(pos);
  if (len > 0) {
    if (len < MIN_LOGIN_ID_BYTES || len > MAX_LOGIN_ID_BYTES) return { skip: 1 };
    const end = Math.min(buf.length, pos + 2 + len);
    if (!digits(buf, pos + 2, end)) return { skip: 1 };
    return avail >= len + 2 ? { frame: len + 2 } : { wait: true };
  }
  for (let i = 2; i < Math.min(avail, 4); i++) if (buf[pos + i] !== 0) return { skip: 1 };
  if (avail < 8) return { wait: true };
  const dataLength = buf.readUInt32BE(pos + 4);
  if (dataLength < 3 || dataLength + 12 > maxFrameBytes) return { skip: 1 };
  if (avail >= 9 && !KNOWN_CODECS.has(buf[pos + 8])) return { skip: 1 };
  return avail >= dataLength + 12 ? { frame: dataLength + 12 } : { wait: true };
}

export function createTeltonikaSplitter(maxFrameBytes = TELTONIKA_MAX_FRAME_BYTES): FrameSplitter {
  return steppedSplitter(nextStep, maxFrameBytes);
}
