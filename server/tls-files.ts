/** TLS files named by configuration, read and checked at start. */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../config/config.js';
import { tlsPairProblem } from '../gateway/shared/stream-server.js';

/**
 * A TLS certificate and key from the files `${prefix}_CERT` and `${prefix}_KEY` name: one that
 * cannot be read, or two that are not a pair, is the configuration error naming its variable
 * (Node said only "ENOENT: no such file or directory, open '…'" or "error:0480006C:PEM
 * routines::no start line", at the first handshake for the edge link).
 */
export function readTlsPair(
  prefix: 'TRACKGATE_GATEWAY_TLS' | 'TRACKGATE_MQTT_TLS',
  certFile: string,
  keyFile: string,
): { cert: Buffer; key: Buffer } {
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
