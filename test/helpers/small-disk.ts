/**
 * A real full disk for tests: a tmpfs of its own (root only: CI's container runs as root), that
 * `fill()` fills up to the last block, so every SQLite connection gets SQLITE_FULL (and no room
 * for a `-shm` file) the way a full disk gives it. Skipped with a message where it cannot be
 * mounted (not root, or a container without CAP_SYS_ADMIN, in CI too: a mount is the machine's
 * privilege, not a service the suite can start); test/api/health.test.ts covers storage refusing
 * writes without one.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface SmallDisk {
  /** the mount point */
  dir: string;
  /** Writes a file of zeros until the file system has no block left. */
  fill(): void;
  /** Deletes that file. */
  free(): void;
}

let mountable: boolean | undefined;

/** Whether this process may mount a tmpfs (tried once). */
export function canMountTmpfs(): boolean {
  if (mountable !== undefined) return mountable;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tg-mount-check-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'ignore' });
    execFileSync('umount', [dir], { stdio: 'ignore' });
    mountable = true;
  } catch {
    mountable = false;
    console.warn(
      '[trackgate tests] cannot mount a tmpfs (needs root with CAP_SYS_ADMIN): skipping the full-disk tests',
    );
  }
  rmSync(dir, { recursive: true, force: true });
  return mountable;
}

/** Mounts a tmpfs of `sizeKiB`, unmounted when the test ends. */
export function smallDisk(t: { teardown(fn: () => unknown): void }, sizeKiB: number): SmallDisk {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tg-small-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKiB}k`, 'tmpfs', dir]);
  t.teardown(() => {
    // lazily: a server the test left running still holds files there
    execFileSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  const filler = path.join(dir, 'filler');
  return {
    dir,
    fill() {
      const fd = openSync(filler, 'a');
      const block = Buffer.alloc(4096);
      try {
        for (;;) writeSync(fd, block);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
      } finally {
        closeSync(fd);
      }
    },
    free() {
      unlinkSync(filler);
    },
  };
}
