/**
 * The media family: photos sent in parts (0x35 information, 0x7979 0x36 data); the session tracks
 * how much of each picture arrived.
 */
import type { ByteReader } from '../shared/byte-reader.js';
import { outcome, response, type Gt06Env, type Outcome } from './gt06.blocks.js';
import * as C from './gt06.constants.js';
import { SESSION_PHOTOS } from './gt06.constants.js';

interface PhotoState {
  size: number;
  received: number;
}
const MAX_PHOTO_BYTES = 16 * 1024 * 1024;
const MAX_PHOTOS = 4;

function photos(env: Gt06Env): Record<string, PhotoState> {
  const existing = env.ctx.session[SESSION_PHOTOS];
  if (existing && typeof existing === 'object') return existing as Record<string, PhotoState>;
  const created: Record<string, PhotoState> = {};
  env.ctx.session[SESSION_PHOTOS] = created;
  return created;
}

/** request for the next chunk: picture id, offset, chunk size (at most 1024), sent as 0x36 */
function photoRequest(pictureId: number, p: PhotoState): Buffer {
  const content = Buffer.alloc(10);
  content.writeInt32BE(pictureId, 0);
  content.writeUInt32BE(p.received, 4);
  content.writeUInt16BE(Math.min(p.size - p.received, 1024), 8);
  return response(false, C.MSG_X1_PHOTO_DATA, 0, content);
}

/** 0x35 photo information (X1): time, fix, position, camera, source, format, size, picture id. */
export function decodePhotoInfo(r: ByteReader, env: Gt06Env): Outcome {
  r.skip(6 + 1 + 4 + 4 + 1 + 1 + 1); // time, fix status, latitude, longitude, camera, source, format
  const size = r.i32();
  const pictureId = r.i32();
  if (size <= 0 || size > MAX_PHOTO_BYTES) return outcome(undefined);
  const all = photos(env);
  const keys = Object.keys(all);
  if (keys.length >= MAX_PHOTOS) delete all[keys[0]];
  const p: PhotoState = { size, received: 0 };
  all[String(pictureId)] = p;
  return outcome(undefined, [photoRequest(pictureId, p)]);
}

/** 0x7979 0x36 photo data: picture id, offset, u16 length, bytes; asks for the next chunk until complete. */
export function decodePhotoData(r: ByteReader, env: Gt06Env): Outcome {
  const pictureId = r.i32();
  const offset = r.u32();
  const chunk = r.bytes(r.u16(), 'photo chunk');
  const all = photos(env);
  const p = all[String(pictureId)];
  if (!p) return outcome(undefined);
  // by the chunk's own offset, so a chunk decoded twice (or resent) is counted once
  p.received = Math.min(p.size, Math.max(p.received, offset + chunk.length));
  if (p.received < p.size && chunk.length > 0) return outcome(undefined, [photoRequest(pictureId, p)]);
  delete all[String(pictureId)];
  return outcome(undefined);
}
