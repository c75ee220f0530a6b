/**
 * What happens to one decoded frame, whatever carried it: resolve the device through core, store
 * the messages through the one ingest path, and only then hand back the replies that acknowledge
 * them. It never rejects: every failure comes back as an outcome the caller answers.
 * A frame is stored as decoded for the model and settings the device record names when it arrives,
 * so when the resolved ones differ from those the caller decoded with, the frame is decoded again
 * first (docs/tracker-gateway.md "Device model and settings"); decoders allow this.
 */
import { ProtocolError, type CommandResult, type DecodeResult } from '../../protocols/types.js';
import type { GatewayDevice } from '../../core/model/device.js';
import type { Resolution } from '../../core/devices/device-directory.js';
import type { IngestResult } from '../../core/ingest/ingest.service.js';
import type { Report } from '../../core/model/report.js';
import type { Logger } from '../../core/logger.js';
import type { TrackerCounts } from '../../core/metrics/counts.js';
import { liveFrame, type FrameTap, type RawFrame } from './frame-tap.js';
import type { LogBudget } from './log-budget.js';

/**
 * The core's directory and ingest, or in a gateway process their answers over gateway/ipc/. The
 * listeners know a device by what a gateway process is told of it (GatewayDevice): in the core's
 * own process they are handed, and hand back, the directory's whole records.
 */
export interface GatewayDeps {
  directory: {
    resolve(
      identifier: string,
      protocol: string,
      remoteAddress: string | null,
      alternatives?: readonly string[],
    ): Promise<Resolution<GatewayDevice>>;
    touch(device: GatewayDevice, protocol: string): Promise<void>;
  };
  ingest: { submit(device: GatewayDevice, protocol: string, reports: readonly Report[]): Promise<IngestResult> };
  logger: Logger;
  /** the raw-frame feed (live/{deviceId}/frames); absent: frames are not shown */
  frames?: FrameTap;
  /** the protocol's counts for GET /metrics (a malformed frame is counted where decoding failed); absent: metrics are off */
  counts?: TrackerCounts;
}

export type FrameOutcome =
  /** stored (or nothing to store); send these replies */
  | { kind: 'ok'; device: GatewayDevice; replies: Buffer[]; commandResults?: CommandResult[] }
  /** unknown, deleted or expired: nothing stored; send the rejection if any */
  | { kind: 'rejected'; identity: string; rejection?: Buffer; status?: 'unknown' | 'expired' }
  /** an identity no device can have (e.g. a NUL byte in it): refused before storage sees it */
  | { kind: 'invalid'; identity: string; reason: string; rejection?: Buffer }
  /** no identity yet on this channel: nothing stored, nothing sent */
  | { kind: 'anonymous' }
  /** the frame cannot be decoded for its device's model (`device`): nothing stored, nothing sent */
  | { kind: 'malformed'; error: unknown; device?: GatewayDevice }
  /** storage failed (looking the device up or writing): nothing acknowledged, the tracker resends */
  | { kind: 'failed'; error: unknown };

/** What a frame is decoded for: the device record's model and decoder settings (DecodeContext). */
export interface DecoderProfile {
  model?: string;
  options?: Readonly<Record<string, string>>;
}

/** The device already known on a channel, and the model and settings the frame was decoded with. */
export interface KnownDevice extends DecoderProfile {
  identity?: string;
}

/** Decodes the frame at hand again, for a device of this model and settings. */
export type Redecode = (profile: DecoderProfile) => DecodeResult;

/** The model and settings a device's frames are decoded with (no settings: `options` absent). */
export function profileOf(device: Pick<GatewayDevice, 'model' | 'protocolOptions'>): DecoderProfile {
  const options = device.protocolOptions ?? {};
  return {
    ...(device.model != null && { model: device.model }),
    ...(Object.keys(options).length > 0 && { options }),
  };
}

function sameOptions(a: Readonly<Record<string, string>> = {}, b: Readonly<Record<string, string>> = {}): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

/** Whether a frame decoded for `known` must be decoded again for `wanted`. */
export const profileDiffers = (known: DecoderProfile, wanted: DecoderProfile): boolean =>
  known.model !== wanted.model || !sameOptions(known.options, wanted.options);

/**
 * Handles a decoded frame (see the top of this file); with `raw`, the frame and its outcome are
 * then offered to the raw-frame feed, if anyone listens to frames of its account.
 */
export function handleDecoded(
  deps: GatewayDeps,
  protocol: string,
  decoded: DecodeResult,
  known: KnownDevice,
  remoteAddress: string | null,
  redecode: Redecode,
  raw?: RawFrame,
): Promise<FrameOutcome> {
  // Not an async function: its parameters would stay reachable until the commit, and with them
  // every decoded report (see resolveAndStore). Only the feed keeps the decoded frame, and only
  // while someone listens to frames of its account (resolveAndStore lets it go otherwise).
  const shown: Shown | undefined = raw && deps.frames ? { tap: deps.frames, raw, result: decoded } : undefined;
  return resolveAndStore(deps, protocol, decoded, known, remoteAddress, redecode, shown).then((outcome) => {
    // a malformed outcome is counted where it is logged (logMalformed)
    if (outcome.kind === 'rejected' || outcome.kind === 'invalid') deps.counts?.frameOfUnknown();
    else if (outcome.kind !== 'malformed') deps.counts?.frameDecoded();
    if (shown?.result && shown.raw) showFrame(shown.tap, protocol, shown.raw, remoteAddress, shown.result, outcome);
    return outcome;
  });
}

/** A frame kept for the raw-frame feed while it waits for its commit: emptied when nobody listens to it. */
interface Shown {
  tap: FrameTap;
  raw?: RawFrame;
  /** the frame as stored (decoded again for its device's model, if need be) */
  result?: DecodeResult;
}

/** Lets go of the frame kept for the feed unless someone listens to frames of `accountId` (null: of unknown identifiers). */
function keepShownFor(shown: Shown | undefined, accountId: string | null): void {
  if (shown && !shown.tap.wants(accountId)) shown.raw = shown.result = undefined;
}

/** Offers the frame to the raw-frame feed: a known device's to its account, an unknown identifier's to admins. */
function showFrame(
  tap: FrameTap,
  protocol: string,
  raw: RawFrame,
  remote: string | null,
  result: DecodeResult,
  outcome: FrameOutcome,
): void {
  if (outcome.kind === 'ok') {
    if (tap.wants(outcome.device.accountId))
      tap.offer(
        outcome.device.accountId,
        outcome.device.id,
        liveFrame(protocol, raw, remote, result, outcome.replies, 'ok'),
      );
  } else if (outcome.kind === 'rejected' && outcome.status === 'unknown') {
    if (tap.wants(null))
      tap.offer(
        null,
        null,
        liveFrame(protocol, raw, remote, result, outcome.rejection ? [outcome.rejection] : [], 'unknown'),
      );
  } else if (outcome.kind === 'malformed' && outcome.device) {
    if (tap.wants(outcome.device.accountId))
      tap.offer(
        outcome.device.accountId,
        outcome.device.id,
        liveFrame(protocol, raw, remote, null, [], 'malformed', reasonOf(outcome.error)),
      );
  }
}

const reasonOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Every transport's one treatment of a frame it cannot read (the decoder threw, for the channel's
 * model or the device's): counted malformed and logged as `malformed frame` with the reason,
 * within the channel's log budget. Nothing of it is stored or acknowledged.
 */
export function logMalformed(
  deps: Pick<GatewayDeps, 'logger' | 'counts'>,
  budget: LogBudget,
  nowMs: number,
  where: Record<string, unknown>,
  error: unknown,
  frame: Buffer,
): void {
  deps.counts?.frameMalformed();
  if (!budget.take(nowMs)) return;
  const excerpt = error instanceof ProtocolError ? error.excerpt : frame.subarray(0, 32).toString('hex');
  deps.logger.warn({ ...where, excerpt, reason: reasonOf(error) }, 'malformed frame');
}

/**
 * Offers a frame the decoder could not read to the raw-frame feed (outcome `malformed`, with the
 * reason): to the account of the device it names (ProtocolError.identity), or else of the device
 * its channel identified as; an identifier no device has, to admins (live/unknown/frames). The
 * device is looked up only while someone listens to frames. Never rejects.
 */
export async function showUndecodable(
  deps: GatewayDeps,
  protocol: string,
  error: unknown,
  known: KnownDevice,
  remoteAddress: string | null,
  raw: RawFrame,
): Promise<void> {
  const tap = deps.frames;
  if (!tap?.listening()) return;
  const named = error instanceof ProtocolError ? error.identity : undefined;
  const identity = named ?? known.identity;
  if (identity === undefined) return;
  let resolution: Resolution<GatewayDevice>;
  try {
    resolution = await deps.directory.resolve(identity, protocol, remoteAddress);
  } catch {
    return; // storage failed: the frame is not shown, as it is not stored
  }
  const decoded = named === undefined ? null : { identity: named, messages: [], replies: [] };
  const frame = () => liveFrame(protocol, raw, remoteAddress, decoded, [], 'malformed', reasonOf(error));
  if (resolution.status === 'ok') {
    if (tap.wants(resolution.device.accountId)) tap.offer(resolution.device.accountId, resolution.device.id, frame());
  } else if (resolution.status === 'unknown' && tap.wants(null)) {
    tap.offer(null, null, frame());
  }
}

/**
 * Resolves the frame's device and hands its messages to the ingest. What waits for the commit
 * holds only the outcome: thousands of frames wait for each group commit, and keeping their
 * decoded reports (already turned into locations by the ingest) alive until then made each
 * young-generation garbage collection copy them. `shown`: where the frame as stored (decoded
 * again for its device's model, if need be) is left for the raw-frame feed, when it is wanted.
 */
async function resolveAndStore(
  deps: GatewayDeps,
  protocol: string,
  decoded: DecodeResult,
  known: KnownDevice,
  remoteAddress: string | null,
  redecode: Redecode,
  shown?: Shown,
): Promise<FrameOutcome> {
  let result = decoded;
  const identity = result.identity ?? known.identity;
  if (identity === undefined) return { kind: 'anonymous' };
  // the forms the frame gives its identity in (a channel's known identity is a device id already)
  const alternatives = result.identity !== undefined ? result.alternativeIdentities : undefined;
  let resolution: Resolution<GatewayDevice>;
  try {
    resolution = await deps.directory.resolve(identity, protocol, remoteAddress, alternatives);
  } catch (error) {
    return { kind: 'failed', error };
  }
  if (resolution.status === 'invalid')
    return { kind: 'invalid', identity, reason: resolution.reason, rejection: result.rejection };
  if (resolution.status !== 'ok')
    return { kind: 'rejected', identity, rejection: result.rejection, status: resolution.status };
  const device = resolution.device;
  // a frame nobody listens to must not wait for the commit in memory (most frames)
  keepShownFor(shown, device.accountId);
  const profile = profileOf(device);
  if (profileDiffers(known, profile)) {
    try {
      result = redecode(profile);
    } catch (error) {
      return { kind: 'malformed', error, device };
    }
    if (shown?.result) shown.result = result;
  }
  // Best effort, off the acknowledgement path: a failure is logged by the directory.
  deps.directory
    .touch(device, protocol)
    .catch((e: unknown) => deps.logger.warn({ err: (e as Error).message }, 'recording last connection failed'));
  const ok: FrameOutcome = {
    kind: 'ok',
    device,
    replies: result.replies,
    ...(result.commandResults?.length && { commandResults: result.commandResults }),
  };
  if (!result.messages.length) return ok;
  // Returned, not awaited: this function is done and holds nothing while the commit runs.
  return deps.ingest.submit(device, protocol, result.messages).then(
    () => ok,
    (error: unknown): FrameOutcome => ({ kind: 'failed', error }),
  );
}
