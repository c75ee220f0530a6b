/** History export tests: many fixes written straight into SQLite, and an export read over node:http keeping nothing. */
import http from 'node:http';
import type { TestServer } from './server.js';
import { sqliteTransactionConnection } from '../../core/db/db.js';

/** `rows` fixes of `deviceId`, one a second from `t0Ms`, written straight into SQLite in one transaction. */
export async function insertRows(s: TestServer, deviceId: string, t0Ms: number, rows: number): Promise<void> {
  await s.running.db.transaction(async (trx) => {
    const conn = (await sqliteTransactionConnection(trx))!;
    const insert = conn.prepare('insert into locations (device_id, date_time, server_time, data) values (?, ?, ?, ?)');
    for (let i = 0; i < rows; i++) {
      const ms = t0Ms + i * 1000;
      const data = `{"dateTime":"${new Date(ms).toISOString()}","latitude":${40 + (i % 1000) / 1e4},"longitude":${-3 - (i % 977) / 1e4},"speed":${i % 120},"course":${i % 360},"altitude":${600 + (i % 50)},"satellites":${i % 12},"battery":${i % 100},"valid":true,"attributes":{"ignition":${i % 2 === 0}},"protocol":"gt06"}`;
      insert.run(deviceId, ms, ms, data);
    }
  });
}

export interface Streamed {
  status: number;
  bytes: number;
  lines: number;
  /** the whole answer arrived (its last chunk included) */
  complete: boolean;
}

/**
 * Reads an export over node:http, counting bytes and lines and keeping nothing. `onFirstChunk`
 * runs once, at the first chunk, with the response paused meanwhile.
 */
export function streamExport(
  s: TestServer,
  path: string,
  onFirstChunk?: (req: http.ClientRequest) => Promise<void>,
): Promise<Streamed> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${s.base}${path}`, { headers: { authorization: `Bearer ${s.adminToken}` } }, (res) => {
      let bytes = 0;
      let lines = 0;
      let first = true;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
        if (first && onFirstChunk) {
          first = false;
          res.pause();
          onFirstChunk(req).then(() => res.resume(), reject);
        }
      });
      res.on('error', () => {});
      res.on('close', () => resolve({ status: res.statusCode ?? 0, bytes, lines, complete: res.complete }));
    });
    req.on('error', () => {});
  });
}
