/** TLS files named by configuration: read and checked at start, and watched for a renewal. */
import { X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { ConfigError } from '../config/config.js';
import type { Logger } from '../core/logger.js';
import { tlsPairProblem, type TlsPair } from '../gateway/shared/stream-server.js';

type Prefix = 'TRACKGATE_GATEWAY_TLS' | 'TRACKGATE_MQTT_TLS' | 'TRACKGATE_TLS';

/**
 * A TLS certificate and key from the files `${prefix}_CERT` and `${prefix}_KEY` name: one that
 * cannot be read, or two that are not a pair, is the configuration error naming its variable
 * (Node said only "ENOENT: no such file or directory, open '…'" or "error:0480006C:PEM
 * routines::no start line", at the first handshake for the edge link).
 */
export function readTlsPair(prefix: Prefix, certFile: string, keyFile: string): { cert: Buffer; key: Buffer } {
  const read = (file: string, variable: string) => {
    try {
      return readFileSync(file);
    } catch (e) {
      throw new ConfigError(variable, `cannot read ${file} (${(e as Error).message})`);
    }
  };
  const pair = { cert: read(certFile, `${prefix}_CERT`), key: read(keyFile, `${prefix}_KEY`) };
  const problem = tlsPairProblem(pair.cert, pair.key);
  if (problem)
    throw new ConfigError(
      `${prefix}_CERT`,
      `${certFile} and ${prefix}_KEY ${keyFile} are not a PEM certificate and its key (${problem})`,
    );
  return pair;
}

/** A certificate and key in use, taking each renewal written over their files. */
export interface WatchedTlsPair {
  current(): { cert: Buffer; key: Buffer };
  /** Calls `fn` with each renewed pair that is good (a bad one is logged and the old one kept). */
  onChange(fn: (pair: { cert: Buffer; key: Buffer }) => void): void;
  stop(): void;
}

export interface WatchTlsOptions {
  prefix: Prefix;
  certFile: string;
  keyFile: string;
  /** how often the files are looked at (TRACKGATE_TLS_CHECK_INTERVAL) */
  intervalMs: number;
  logger: Logger;
}

/** The certificate's SHA-256 fingerprint and end of validity, for the log. */
function describe(cert: Buffer): { fingerprint256?: string; validTo?: string } {
  try {
    const x = new X509Certificate(cert);
    return { fingerprint256: x.fingerprint256, validTo: x.validTo };
  } catch {
    return {};
  }
}

/** What tells a file was replaced: its inode (a rename, a symbolic link moved), size and time. */
async function signature(files: string[]): Promise<string> {
  const parts = await Promise.all(
    files.map((f) =>
      stat(f).then(
        (s) => `${s.ino}:${s.size}:${s.mtimeMs}`,
        (e: NodeJS.ErrnoException) => `missing:${e.code}`,
      ),
    ),
  );
  return parts.join('|');
}

/**
 * Reads the pair now (a bad one is the ConfigError of readTlsPair), then looks at both files every
 * `intervalMs`. A change is taken once the files have stayed the same for one more look, so a
 * renewal that writes the certificate and then the key (certbot, a copy in two steps) is read
 * whole: within two intervals. A pair that cannot be read, or whose key is not the certificate's,
 * is logged at error once and the one in use stays; new connections get a good renewal, open ones
 * keep the certificate they shook hands with. Polled, not fs.watch: a renewal often moves a
 * symbolic link (Let's Encrypt's live/ directory), which a watch on the file misses.
 */
export function watchTlsPair(o: WatchTlsOptions): WatchedTlsPair {
  let pair = readTlsPair(o.prefix, o.certFile, o.keyFile);
  const listeners: ((p: { cert: Buffer; key: Buffer }) => void)[] = [];
  const files = [o.certFile, o.keyFile];
  // the files as they were read: a change from here on is a renewal
  let seen = files
    .map((f) => {
      const s = statSync(f);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    })
    .join('|');
  let pending: string | undefined;
  let checking = false;
  const where = { certificate: o.certFile, key: o.keyFile };

  async function load(): Promise<void> {
    let next: { cert: Buffer; key: Buffer };
    try {
      next = { cert: await readFile(o.certFile), key: await readFile(o.keyFile) };
    } catch (e) {
      o.logger.error(
        { ...where, err: (e as Error).message },
        `TLS certificate not renewed: ${o.prefix}_CERT or _KEY cannot be read; the one in use stays`,
      );
      return;
    }
    const problem = tlsPairProblem(next.cert, next.key);
    if (problem) {
      o.logger.error(
        { ...where, err: problem },
        `TLS certificate not renewed: the files of ${o.prefix}_CERT and _KEY are not a certificate and its key; the one in use stays`,
      );
      return;
    }
    pair = next;
    o.logger.info({ ...where, ...describe(next.cert) }, 'TLS certificate renewed: new connections get it');
    for (const fn of listeners) fn(next);
  }

  async function check(): Promise<void> {
    if (checking) return;
    checking = true;
    try {
      const now = await signature(files);
      if (now === seen) {
        pending = undefined;
        return;
      }
      if (now !== pending) {
        pending = now;
        return;
      }
      // the same for one whole interval: taken (or refused) once, until the files change again
      seen = now;
      pending = undefined;
      await load();
    } finally {
      checking = false;
    }
  }

  const timer = setInterval(() => {
    check().catch((e: unknown) => o.logger.error({ ...where, err: e }, 'TLS certificate check failed'));
  }, o.intervalMs);
  timer.unref();
  return {
    current: () => pair,
    onChange: (fn) => listeners.push(fn),
    stop: () => clearInterval(timer),
  };
}

/** The box's certificate (TRACKGATE_TLS_CERT and _KEY), watched; undefined when none is set. */
export function watchBoxTls(
  config: { tlsCert?: string; tlsKey?: string; tlsCheckSeconds: number },
  logger: Logger,
): WatchedTlsPair | undefined {
  if (!config.tlsCert || !config.tlsKey) return undefined;
  return watchTlsPair({
    prefix: 'TRACKGATE_TLS',
    certFile: config.tlsCert,
    keyFile: config.tlsKey,
    intervalMs: config.tlsCheckSeconds * 1000,
    logger,
  });
}

export type { TlsPair };
