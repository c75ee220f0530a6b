/**
 * What happens to one decoded frame, whatever carried it (TCP stream, UDP datagram, HTTP
 * request): resolve the identity through core, store the messages through the one ingest path,
 * and only then hand back the replies that acknowledge them.
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
  /** no identity yet on this channel: nothing stored, nothing sent */
  | { kind: 'anonymous' }
  /** storage failed: nothing acknowledged, the tracker resends */
  | { kind: 'failed'; error: unknown };

export async function handleDecoded(
  deps: GatewayDeps,
  protocol: string,
  result: DecodeResult,
  known: { identity?: string },
  remoteAddress: string | null,
): Promise<FrameOutcome> {
  const identity = result.identity ?? known.identity;
  if (!identity) return { kind: 'anonymous' };
  const resolution = await deps.directory.resolve(identity, protocol, remoteAddress);
  if (resolution.status !== 'ok') return { kind: 'rejected', identity, rejection: result.rejection };
  const device = resolution.device;
  void deps.directory.touch(device, protocol);
  if (result.messages.length) {
    try {
      await deps.ingest.submit(device, protocol, result.messages);
    } catch (error) {
      return { kind: 'failed', error };
    }
  }
  return { kind: 'ok', device, replies: result.replies };
}
