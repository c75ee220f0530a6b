#!/usr/bin/env node
// `npm start`'s check before it runs dist/: exits 0 when dist/ was built from the sources as they
// are now, 1 (and `npm run build` follows) when any changed, was added or removed, or dist/ is
// missing. `--stamp` (after a build) records what was built. The record is a SHA-256 of every
// input's path and content, not modification times: a checkout, a copy or a restore that keeps
// old times is still seen. tsc's own incremental check parses every file first, which took
// 30 s and more per start on a busy box when nothing had changed; this reads them, ~50 ms.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

// npm runs scripts in the package's folder
const root = process.cwd();
const STAMP = path.join(root, 'dist', '.build-stamp');
// what decides the output besides the sources: the compiler settings and the installed typings
const SETTINGS = ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'];

/** The files tsconfig.build.json compiles (its `include`: folders and files), in a stable order. */
function inputs() {
  const include = JSON.parse(readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8')).include;
  const files = [];
  const walk = (rel) => {
    const full = path.join(root, rel);
    if (!existsSync(full)) return;
    if (rel.endsWith('.ts')) return void files.push(rel);
    for (const entry of readdirSync(full, { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith('.ts') || entry.name.endsWith('.json')) files.push(child);
    }
  };
  for (const rel of include) walk(rel);
  return [...files.sort(), ...SETTINGS.filter((f) => existsSync(path.join(root, f)))];
}

function digest() {
  const hash = createHash('sha256');
  for (const rel of inputs())
    hash
      .update(`${rel}\0`)
      .update(readFileSync(path.join(root, rel)))
      .update('\0');
  return hash.digest('hex');
}

if (process.argv.includes('--stamp')) {
  writeFileSync(STAMP, `${digest()}\n`);
} else {
  const built =
    existsSync(STAMP) && existsSync(path.join(root, 'dist', 'main.js')) ? readFileSync(STAMP, 'utf8').trim() : '';
  if (built !== digest()) {
    process.stderr.write('trackgate: the sources changed since the last build (or there is none): building first\n');
    process.exit(1);
  }
}
