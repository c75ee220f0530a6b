/**
 * One trackgate process per SQLite data directory: its daily counters, licences and remembered
 * last locations assume it is the only writer. A pid file marks the directory; a file left by a
 * process that no longer runs (a crash, SIGKILL) is taken over.
 */
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const FILE = 'trackgate.pid';

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Marks `dir` as this process's; returns the release. Throws when another live process holds it. */
export function lockDataDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, FILE);
  const own = String(process.pid);
  try {
    writeFileSync(file, own, { flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    const holder = Number(readFileSync(file, 'utf8').trim());
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && running(holder)) {
      throw new Error(`is in use by another trackgate process (pid ${holder}); run one process per data directory`);
    }
    writeFileSync(file, own);
  }
  return () => {
    try {
      if (readFileSync(file, 'utf8').trim() === own) unlinkSync(file);
    } catch {
      /* already gone */
    }
  };
}
