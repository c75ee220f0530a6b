/**
 * Headless Chromium for the console's tests: Debian's package (`apt-get install chromium`), driven
 * by playwright-core, which never downloads a browser. Outside CI a missing browser skips those
 * tests with a message; in CI (`CI=true`) it fails them, as backends.ts does for PostgreSQL.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';
import { PATIENCE_MS } from './wait.js';

export const CHROMIUM = process.env.TRACKGATE_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Screenshots of the browser tests: kept after the run, ignored by git. */
export const ARTEFACTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../artefacts');

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Whether this run has the browser; throws in CI when it has not. */
export function browserAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI) throw new Error(`CI: ${CHROMIUM} is missing; .ci/run installs Debian's chromium`);
  console.warn(`[trackgate tests] ${CHROMIUM} not found (apt-get install chromium): skipping the browser tests`);
  return false;
}

/** A fresh browser profile of its own, closed and removed when the test ends. */
export async function openBrowser(
  t: { teardown(fn: () => unknown): void },
  viewport = { width: 1280, height: 800 },
  o: { acceptAnyCertificate?: boolean } = {},
): Promise<BrowserContext> {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'trackgate-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    // the fresh profile is passed as userDataDir (playwright refuses a --user-data-dir argument)
    // a certificate made at test time is its own CA, which the browser cannot be given: accepted as it is
    args: o.acceptAnyCertificate ? [...ARGS, '--ignore-certificate-errors'] : ARGS,
    ignoreHTTPSErrors: o.acceptAnyCertificate ?? false,
    viewport,
  });
  // a busy machine: every wait as patient as the rest of the suite (test/helpers/wait.ts)
  context.setDefaultTimeout(PATIENCE_MS);
  context.setDefaultNavigationTimeout(PATIENCE_MS);
  t.teardown(async () => {
    await context.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
  });
  return context;
}

/** Where a test's screenshot goes: test/artefacts/<suite>/<name>.png. */
export function artefact(suite: string, name: string): string {
  const dir = path.join(ARTEFACTS, suite);
  mkdirSync(dir, { recursive: true });
  return path.join(dir, `${name}.png`);
}
