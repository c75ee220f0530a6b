/**
 * A request that carries messages of several devices (HttpDecodeResult.devices, flespi): each
 * device's group goes the one way every frame goes (gateway/shared/frame-handler.ts: resolved,
 * decoded again for its model and settings if need be, stored), a few devices at a time. The
 * caller answers once all are done: the request is acknowledged only when every known device's
 * messages are stored.
 */
import type { DecodeResult, HttpDecodeResult } from '../../protocols/types.js';
import type { RawFrame } from '../shared/frame-tap.js';
import { handleDecoded, type DecoderProfile, type FrameOutcome, type GatewayDeps } from '../shared/frame-handler.js';

/** devices of one request stored at once: enough to share commits, few enough to bound one request's load */
export const GROUPS_AT_ONCE = 16;

/** One device's group out of a request decoded for `profile` (none there: nothing to store). */
function groupOf(result: HttpDecodeResult, identity: string): DecodeResult {
  const group = result.devices?.find((g) => g.identity === identity);
  return { identity, messages: group?.messages ?? [], replies: [] };
}

/** the request line the feed shows before a body: `METHOD URL` and LF */
const head = (raw: RawFrame): Buffer => {
  const lf = raw.bytes.indexOf(0x0a);
  return raw.bytes.subarray(0, lf < 0 ? 0 : lf + 1);
};

/**
 * Stores every device group of `result`; the outcomes come back in the groups' order. After a
 * failed group the remaining ones are not started (the whole request is sent again anyway).
 */
export async function storeDeviceGroups(
  deps: GatewayDeps,
  protocol: string,
  result: HttpDecodeResult,
  remote: string | null,
  decode: (profile: DecoderProfile) => HttpDecodeResult,
  raw: RawFrame,
): Promise<FrameOutcome[]> {
  const groups = result.devices ?? [];
  const outcomes: FrameOutcome[] = [];
  for (let i = 0; i < groups.length; i += GROUPS_AT_ONCE) {
    const batch = groups.slice(i, i + GROUPS_AT_ONCE).map((g) => {
      const decoded: DecodeResult = { identity: g.identity, messages: g.messages, replies: [] };
      const redecode = (profile: DecoderProfile): DecodeResult => groupOf(decode(profile), g.identity);
      // the feed shows a device its own messages, never the other devices' of the request
      const shown = deps.frames && g.part ? { ...raw, bytes: Buffer.concat([head(raw), g.part()]) } : raw;
      return handleDecoded(deps, protocol, decoded, {}, remote, redecode, shown);
    });
    outcomes.push(...(await Promise.all(batch)));
    if (outcomes.some((o) => o.kind === 'failed')) break;
  }
  return outcomes;
}
