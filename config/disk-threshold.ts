/**
 * TRACKGATE_DISK_WARN and TRACKGATE_DISK_ERROR: how little free space on the database's file system
 * is too little. A value is a share of the file system (`10%`), a size (`2GiB`, `500MB`, `1048576`),
 * both separated by a comma (`10%,2GiB`: whichever is larger, so that a small disk is not warned
 * about too late nor a large one too early), or `off`.
 */

/** A threshold: free space below max(percent % of the file system, bytes) is too little; both 0: off. */
export interface DiskThreshold {
  percent: number;
  bytes: number;
}

/** defaults (docs/operations.md "Sizing the disk") */
export const DISK_WARN_DEFAULT = '10%,2GiB';
export const DISK_ERROR_DEFAULT = '1%,1GiB';

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  m: 1e6,
  mb: 1e6,
  g: 1e9,
  gb: 1e9,
  t: 1e12,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

const PART = /^(\d+(?:\.\d+)?)\s*(%|[a-z]*)$/i;

/** The threshold `raw` says, or a reason it is not one (for ConfigError). */
export function parseDiskThreshold(raw: string): DiskThreshold | string {
  if (raw.trim().toLowerCase() === 'off') return { percent: 0, bytes: 0 };
  const t: DiskThreshold = { percent: 0, bytes: 0 };
  for (const part of raw.split(',').map((p) => p.trim())) {
    const m = PART.exec(part);
    const unit = m?.[2].toLowerCase();
    if (!m || (unit !== '%' && UNITS[unit ?? ''] === undefined))
      return `"${part}" is neither a percentage (10%) nor a size (2GiB, 500MB, bytes)`;
    const n = Number(m[1]);
    if (unit === '%') {
      if (n > 100) return `"${part}" is more than 100%`;
      t.percent = Math.max(t.percent, n);
    } else t.bytes = Math.max(t.bytes, Math.round(n * UNITS[unit ?? '']));
  }
  return t;
}
