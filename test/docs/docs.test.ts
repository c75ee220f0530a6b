import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { HTTP_TRACKER_PROTOCOLS, loadConfig, PROTOCOL_DEFAULT_PORTS } from '../../config/config.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const SKIP = new Set(['node_modules', 'dist', '.git', 'vectors', 'results', 'data']);

/** Every file of the repository that may cite a document: source, tests, docs, scripts. */
function sources(dir = ROOT): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name) || entry.name.startsWith('.git')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sources(full));
    else if (
      /\.(ts|mjs|cjs|js|md|json|yml|yaml)$|^Dockerfile$|^run$/.test(entry.name) &&
      statSync(full).size < 2_000_000
    )
      out.push(full);
  }
  return out;
}

test('docs: every document a comment, a test or a page cites is in the repository', (t) => {
  const missing: string[] = [];
  const outside: string[] = [];
  for (const file of sources()) {
    const text = readFileSync(file, 'utf8');
    const rel = path.relative(ROOT, file);
    // the facts this repository was written from live beside it, not in it: never cited by name
    for (const m of text.matchAll(/(?<![\w/.-])(CONTRACT|PROTOCOLS(-2)?|MQTT|STYLE|DEVELOPERS)\.md/g))
      outside.push(`${rel}: ${m[0]}`);
    for (const m of text.matchAll(/(?<![\w/.-])((?:docs|test\/vectors|bench)\/[\w./-]+\.md)/g)) {
      if (!existsSync(path.join(ROOT, m[1]))) missing.push(`${rel}: ${m[1]}`);
    }
  }
  t.deepEqual(outside, [], "docs/contract.md and docs/protocols.md are the repository's own");
  t.deepEqual(missing, []);
});

test('docs: every relative link of the README and docs/ leads to a file that exists', (t) => {
  const pages = [
    'README.md',
    'CONTRIBUTING.md',
    'BENCHMARKS.md',
    ...readdirSync(path.join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const broken: string[] = [];
  for (const page of pages) {
    for (const [, target] of read(page).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target) || target.startsWith('#')) continue;
      const file = target.split('#')[0];
      if (!existsSync(path.join(ROOT, path.dirname(page), file))) broken.push(`${page}: ${target}`);
    }
  }
  t.deepEqual(broken, []);
});

test('docs: the README is a front page and BENCHMARKS.md holds current figures (at most 300 lines each)', (t) => {
  for (const page of ['README.md', 'BENCHMARKS.md']) {
    const lines = read(page).split('\n').length;
    t.true(lines <= 300, `${page} has ${lines} lines`);
  }
  t.regex(read('README.md'), /```sh\nnpm install && npm start\nnpm test\n```/, 'the quick start is the two commands');
});

test('docs/configuration.md: its table lists exactly the variables loadConfig reads', (t) => {
  const reads = new Set<string>();
  const env = new Proxy({} as Record<string, string | undefined>, {
    get(_, key) {
      if (typeof key === 'string') reads.add(key);
      return undefined;
    },
  });
  loadConfig(env);
  const perProtocol = Object.keys(PROTOCOL_DEFAULT_PORTS).map((p) => `TRACKGATE_${p.toUpperCase()}_PORT`);
  const perTcpProtocol = Object.keys(PROTOCOL_DEFAULT_PORTS)
    .filter((p) => !HTTP_TRACKER_PROTOCOLS.includes(p))
    .map((p) => `TRACKGATE_${p.toUpperCase()}_TLS_PORT`);
  const documented = new Set<string>();
  for (const [, first] of read('docs/configuration.md').matchAll(/^\| ([^|]+) \|/gm)) {
    for (const [, name] of first.matchAll(/`(TRACKGATE_[A-Z0-9_<>]+)`/g)) {
      if (name === 'TRACKGATE_<PROTOCOL>_PORT') perProtocol.forEach((n) => documented.add(n));
      else if (name === 'TRACKGATE_<PROTOCOL>_TLS_PORT') perTcpProtocol.forEach((n) => documented.add(n));
      else documented.add(name);
    }
  }
  const read_ = [...reads].filter((n) => n.startsWith('TRACKGATE_')).sort();
  t.true(read_.length > 30, read_.join(', '));
  t.deepEqual(
    read_.filter((n) => !documented.has(n)),
    [],
    'read, and missing from the table',
  );
  t.deepEqual([...documented].filter((n) => !reads.has(n)).sort(), [], 'in the table, and not read');
});
