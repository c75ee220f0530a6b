/**
 * A trivial tracker server for the generator check: cuts Teltonika and GT06 frames by their
 * length fields and acknowledges each at once (no decoding, no storage). If the generator pushes
 * frames much faster here than to trackgate, the generator is not what limits the ingest figure.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { crc16X25 } from '../../protocols/shared/crc.js';
import { serveCommands } from './child.js';

type Cut = (buf: Buffer, pos: number) => { length: number; ack: Buffer } | undefined;

const teltonika: Cut = (b, p) => {
  if (b.length - p < 2) return undefined;
  const login = b.readUInt16BE(p);
  if (login > 0) return b.length - p >= 2 + login ? { length: 2 + login, ack: Buffer.from([1]) } : undefined;
  if (b.length - p < 10) return undefined;
  const length = 12 + b.readUInt32BE(p + 4);
  if (b.length - p < length) return undefined;
  const ack = Buffer.alloc(4);
  ack.writeUInt32BE(b[p + 9]);
  return { length, ack };
};

const gt06: Cut = (b, p) => {
  if (b.length - p < 3) return undefined;
  const length = b[p + 2] + 5;
  if (b.length - p < length) return undefined;
  const ack = Buffer.from([0x78, 0x78, 0x05, b[p + 3], b[p + length - 6], b[p + length - 5], 0, 0, 0x0d, 0x0a]);
  ack.writeUInt16BE(crc16X25(ack, 2, 6), 6);
  return { length, ack };
};

function listen(cut: Cut): Promise<number> {
  const server = net.createServer((socket) => {
    socket.setNoDelay(true);
    let pending: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      let pos = 0;
      for (let f = cut(pending, pos); f; f = cut(pending, pos)) {
        pos += f.length;
        socket.write(f.ack);
      }
      pending = pending.subarray(pos);
    });
    socket.on('error', () => {});
  });
  return new Promise((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => resolve((server.address() as AddressInfo).port)));
}

serveCommands({
  async start(): Promise<{ teltonika: number; gt06: number }> {
    return { teltonika: await listen(teltonika), gt06: await listen(gt06) };
  },
});
