/** Certificates made at test time (selfsigned): each is its own CA, for localhost and 127.0.0.1. */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generate } from 'selfsigned';

export interface TestCertificate {
  cert: string;
  key: string;
  fingerprint256: string;
}

export async function makeCertificate(name = 'localhost'): Promise<TestCertificate> {
  const pems = await generate([{ name: 'commonName', value: name }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private, fingerprint256: new X509Certificate(pems.cert).fingerprint256 };
}

/** A directory of its own (removed when the test ends) holding cert.pem and key.pem. */
export function certificateFiles(
  t: { teardown(fn: () => unknown): void },
  c: TestCertificate,
): { dir: string; certFile: string; keyFile: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'trackgate-tls-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  writeFileSync(certFile, c.cert);
  writeFileSync(keyFile, c.key);
  return { dir, certFile, keyFile };
}

/** Replaces a file as a renewal does: written beside it, then renamed over it (a new inode). */
export function replaceFile(file: string, content: string): void {
  const next = `${file}.next`;
  writeFileSync(next, content);
  renameSync(next, file);
}
