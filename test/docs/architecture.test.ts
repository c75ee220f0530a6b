import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';

const ROOT = path.resolve(fileURLToPath(import.meta.url), '../../..');
const doc = readFileSync(path.join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8');

/** The paths the page names: in its text, and in the folder tree (children indented under their folder). */
function namedPaths(): Set<string> {
  const named = new Set<string>();
  for (const [p] of doc.matchAll(/\b(?:config|protocols|core|gateway|api)\/[\w./-]*/g))
    named.add(p.replace(/[.,]+$/, ''));
  const tree = doc.slice(doc.indexOf('## Folders'), doc.indexOf('Who may import whom'));
  let folder = '';
  for (const line of tree.split('\n')) {
    const top = /^([\w.-]+\/?)\s/.exec(line);
    if (top) folder = top[1].endsWith('/') ? top[1] : '';
    const child = /^ {2}([\w.-]+(?:\/|\.ts))\s/.exec(line);
    if (child && folder) named.add(folder + child[1]);
    if (top && !folder) named.add(top[1]);
  }
  return new Set([...named].filter((p) => !p.includes('<')));
}

test('docs/ARCHITECTURE.md: every folder and file it names exists', (t) => {
  const named = namedPaths();
  t.true(named.size > 30, [...named].join(' '));
  // a module may be named without `.ts`, or with one of its functions (`frame-handler.handleDecoded`)
  const exists = (p: string) =>
    [p, `${p}.ts`, `${p.replace(/\.\w+$/, '')}.ts`].some((c) => existsSync(path.join(ROOT, c)));
  const missing = [...named].filter((p) => !exists(p));
  t.deepEqual(missing, []);
});
