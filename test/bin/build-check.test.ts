import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const script = path.join(root, 'bin', 'build-check.js');

/** bin/build-check.js run in `dir` as npm runs it (in the package's folder): its exit code. */
const check = (dir: string, ...args: string[]) =>
  new Promise<number>((resolve) =>
    execFile(process.execPath, [script, ...args], { cwd: dir }, (e) =>
      resolve(e ? Number((e as { code?: number }).code ?? 1) : 0),
    ),
  );

test('build-check: npm start builds only when a source, a setting or the build itself changed', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'trackgate-build-check-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const write = (rel: string, text: string) => {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  };
  write('tsconfig.build.json', JSON.stringify({ include: ['core', 'main.ts'] }));
  write('tsconfig.json', '{}');
  write('package.json', '{}');
  write('main.ts', 'export {};\n');
  write('core/a.ts', 'export const a = 1;\n');
  write('dist/main.js', '');

  t.is(await check(dir), 1, 'never built: build');
  t.is(await check(dir, '--stamp'), 0);
  t.is(await check(dir), 0, 'nothing changed: start at once');

  const a = path.join(dir, 'core/a.ts');
  const { atime, mtime } = statSync(a);
  write('core/a.ts', 'export const a = 2;\n');
  // a restore or copy that keeps the old time: the content still tells
  utimesSync(a, atime, mtime);
  t.is(await check(dir), 1, 'a source changed');
  await check(dir, '--stamp');
  write('core/deep/b.ts', 'export const b = 1;\n');
  t.is(await check(dir), 1, 'a source added');
  await check(dir, '--stamp');
  unlinkSync(path.join(dir, 'core/deep/b.ts'));
  t.is(await check(dir), 1, 'a source removed');
  await check(dir, '--stamp');
  write('tsconfig.json', '{"compilerOptions":{}}');
  t.is(await check(dir), 1, 'the compiler settings changed');
  await check(dir, '--stamp');
  write('test/x.test.ts', 'export {};\n');
  t.is(await check(dir), 0, 'what the build does not compile (tests) changes nothing');
  unlinkSync(path.join(dir, 'dist/main.js'));
  t.is(await check(dir), 1, 'the build output is gone');
});

test('build-check: npm start and npm run build use it, and npm install still builds (prepare)', (t) => {
  const { scripts } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  t.is(scripts.prestart, 'node bin/build-check.js || npm run build');
  t.regex(scripts.build, /^tsc -p tsconfig\.build\.json && node bin\/build-check\.js --stamp$/);
  t.is(scripts.prepare, 'npm run build');
});
