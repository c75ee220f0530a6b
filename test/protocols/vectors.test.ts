import test from 'ava';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { protocols } from '../../protocols/index.js';
import { loadVectors, vectorsDir } from '../helpers/vectors.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('vectors: the captured frames live inside the repository, so a bare clone can run the tests', (t) => {
  if (process.env.TRACKGATE_VECTORS_DIR) return t.pass('TRACKGATE_VECTORS_DIR overrides the folder');
  const dir = path.resolve(vectorsDir());
  t.true(dir.startsWith(repoRoot + path.sep), `${dir} is outside ${repoRoot}`);
  t.true(existsSync(path.join(dir, 'README.md')), 'the folder says where the frames come from');
});

test('vectors: every protocol with a decoder has captured frames', (t) => {
  for (const name of Object.keys(protocols)) {
    const vectors = loadVectors(name);
    t.true(vectors.length > 0, name);
    t.true(
      vectors.every((v) => v.protocol === name),
      `${name}: every line names its protocol`,
    );
  }
});
