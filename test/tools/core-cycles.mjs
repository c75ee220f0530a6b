// Fails when core/'s feature folders (core/<feature>/) import each other in a cycle. dependency-cruiser's
// no-circular sees cycles between files only; this builds the folder graph from every import and export
// (type-only ones too: a type import ties the folders together as much as a value one) and names a cycle.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? '.');
const core = path.join(root, 'core');

function filesUnder(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return filesUnder(p);
    return /\.ts$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

// the feature folder of a file in core/, or undefined for core/'s own files (clock.ts, errors.ts, …),
// which sit below every folder
function folderOf(file) {
  const parts = path.relative(core, file).split(path.sep);
  return parts.length > 1 ? parts[0] : undefined;
}

/** @type {Map<string, Map<string, string>>} folder → folder it imports → one file that does it */
const edges = new Map();
const upward = []; // core/'s own files importing a folder
for (const file of filesUnder(core)) {
  const from = folderOf(file);
  if (from !== undefined && !edges.has(from)) edges.set(from, new Map());
  const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
  for (const { fileName } of importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const target = path.resolve(path.dirname(file), fileName);
    if (!target.startsWith(core + path.sep)) continue;
    const to = folderOf(target);
    if (to === undefined || to === from) continue;
    const where = `${path.relative(root, file)} → ${fileName}`;
    if (from === undefined) upward.push(where);
    else if (!edges.get(from).has(to)) edges.get(from).set(to, where);
  }
}
if (upward.length) {
  console.error(`core/'s own files (below every feature folder) import a folder:\n  ${upward.join('\n  ')}`);
  process.exit(1);
}

// depth-first search; a folder met again while still on the path closes a cycle
const state = new Map(); // folder → 'open' | 'done'
const trail = [];
const order = []; // the folders, each after every folder it imports
function visit(folder) {
  state.set(folder, 'open');
  trail.push(folder);
  for (const next of [...(edges.get(folder)?.keys() ?? [])].sort()) {
    if (state.get(next) === 'open') return trail.slice(trail.indexOf(next)).concat(next);
    if (state.get(next) === undefined) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
  }
  trail.pop();
  state.set(folder, 'done');
  order.push(folder);
  return undefined;
}

for (const folder of [...edges.keys()].sort()) {
  if (state.get(folder) !== undefined) continue;
  const cycle = visit(folder);
  if (cycle) {
    console.error(`core/ feature folders import each other in a cycle: ${cycle.join(' → ')}`);
    for (let i = 0; i + 1 < cycle.length; i++) console.error(`  ${edges.get(cycle[i]).get(cycle[i + 1])}`);
    process.exit(1);
  }
}
if (process.argv.includes('--layers')) {
  // each folder one layer above the highest it imports (the layer order in docs/ARCHITECTURE.md)
  const layer = new Map();
  for (const folder of order)
    layer.set(folder, Math.max(-1, ...[...edges.get(folder).keys()].map((d) => layer.get(d))) + 1);
  const layers = [];
  for (const [folder, n] of layer) (layers[n] ??= []).push(folder);
  layers.forEach((folders, n) => console.log(`${n}: ${folders.sort().join(', ')}`));
}
console.log(`core/ feature folders: no cycle among ${order.length}`);
