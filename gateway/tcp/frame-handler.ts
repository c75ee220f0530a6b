/**
 * What happens to one decoded frame, whatever carried it (TCP stream, UDP datagram, HTTP
 * request): resolve the identity through core, store the messages through the one ingest path,
 * and only then hand back the replies that acknowledge them. It never rejects: every failure,
 * storage outages included, comes back as an outcome the caller answers (no acknowledgement).
 */
import type { DecodeResult } from '../../protocols/types.js';
import type { DeviceRecord } from '../../core/model/device.js';
import type { DeviceDirectory } from '../../core/devices/device-directory.js';
import type { IngestService } from '../../core/ingest/ingest.service.js';
import type { Logger } from '../../core/logger.js';

export interface GatewayDeps {
  directory: DeviceDirectory;
  ingest: IngestService;
  logger: Logger;
}

export type FrameOutcome =
  /** stored (or nothing to store); send these replies */
  | { kind: 'ok'; device: DeviceRecord; replies: Buffer[] }
  /** unknown, deleted or expired: nothing stored; send the rejection if any */
  | { kind: 'rejected'; identity: string; rejection?: Buffer }
  /** an identity no device can have (e.g. a NUL byte in it): refused before storage sees it */
  | { kind: 'invalid'; identity: string; reason: string; rejection?: Buffer }
  /** no identity yet on this channel: nothing stored, nothing sent */
  | { kind: 'anonymous' }
  /** storage failed (looking the device up or writing): nothing acknowledged, the tracker resends */
  | { kind: 'failed'; error: unknown };

export async function handleDecoded(
  deps: GatewayDeps,
  protocol: string,
  result: DecodeResult,
  known: { identity?: string },
  remoteAddress: string | null,
): Promise<FrameOutcome> {
  const identity = result.identity ?? known.identity;
  if (identity === undefined) return { kind: 'anonymous' };
  let resolution;
  try {
    resolution = await deps.directory.resolve(identity, protocol, remoteAddress);
  } catch (error) {
    return { kind: 'failed', error };
  }
  if (resolution.status === 'invalid') return { kind: 'invalid', identity, reason: resolution.reason, rejection: result.rejection };
  if (resolution.status !== 'ok') return { kind: 'rejected', identity, rejection: result.rejection };
  const device = resolution.device;
  // Best effort, off the acknowledgement path: a failure is logged by the directory.
  deps.directory.touch(device, protocol).catch((e: unknown) => deps.logger.warn({ err: (e as Error).message }, 'recording last connection failed'));
  if (result.messages.length) {
    try {
      await deps.ingest.submit(device, protocol, result.messages);
    } catch (error) {
      return { kind: 'failed', error };
    }
  }
  return { kind: 'ok', device, replies: result.replies };
}
