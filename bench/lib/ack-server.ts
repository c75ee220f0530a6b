/**
 * A trivial tracker server for the generator check: cuts Teltonika, GT06 and Ruptela frames by
 * their length fields, Queclink (gl200) text at its `$`, Wialon lines at LF and Navtelecom NTCB
 * and FLEX frames by their lengths (FLEX: the bench's 37-byte records), and acknowledges each at once with
 * what trackgate answers (no decoding, no storage). If the generator pushes frames much faster here
 * than to trackgate, the generator is not what limits the ingest figure.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { crc16X25 } from '../../protocols/shared/crc.js';
import { type BenchProtocol, NAVIS_LOGIN_ACK, WIALON_DATA_ACK, WIALON_LOGIN_ACK, navisArrayAck } from './frames.js';
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

/** `+ACK:GTHBD,<version>,…,<count>$` -> `+SACK:GTHBD,<version>,<count>$`; any other report -> `+SACK:<count>$` */
const gl200: Cut = (b, p) => {
  const end = b.indexOf(0x24, p);
  if (end < 0) return undefined;
  const fields = b.toString('latin1', p, end).split(',');
  const count = fields[fields.length - 1];
  const text = fields[0] === '+ACK:GTHBD' ? `+SACK:GTHBD,${fields[1]},${count}$` : `+SACK:${count}$`;
  return { length: end + 1 - p, ack: Buffer.from(text, 'latin1') };
};

const RUPTELA_ACKS: Record<number, Buffer> = {
  1: Buffer.from('0002640113bc', 'hex'),
  15: Buffer.from('00027301cb25', 'hex'),
};

/** `u16 length | IMEI, command, payload | u16 CRC`: records and identification answered */
const ruptela: Cut = (b, p) => {
  if (b.length - p < 2) return undefined;
  const length = 2 + b.readUInt16BE(p) + 2;
  if (b.length - p < length) return undefined;
  return { length, ack: RUPTELA_ACKS[b[p + 10]] ?? Buffer.alloc(0) };
};

/** `#L#…` -> `#AL#1`, `#D#…` -> `#AD#1`, each line ended by CR LF */
const wialon: Cut = (b, p) => {
  const end = b.indexOf(0x0a, p);
  if (end < 0) return undefined;
  const type = b.toString('latin1', p, p + 3);
  return { length: end + 1 - p, ack: type === '#L#' ? WIALON_LOGIN_ACK : WIALON_DATA_ACK };
};

/** the bench's FLEX record: the first 14 fields (bench/lib/frames.ts navisArray) */
const NAVIS_RECORD = 37;
const NAVIS_ACKS = NAVIS_LOGIN_ACK;

/** NTCB `*>S` and `*>FLEX` answered together after the second; FLEX `~A` arrays answered `~A n crc` */
const navis: Cut = (b, p) => {
  if (b.length - p < 3) return undefined;
  if (b[p] === 0x40) {
    if (b.length - p < 16) return undefined;
    const length = 16 + b.readUInt16LE(p + 12);
    if (b.length - p < length) return undefined;
    const flex = b.toString('latin1', p + 16, p + 22) === '*>FLEX';
    return { length, ack: flex ? NAVIS_ACKS : Buffer.alloc(0) };
  }
  const length = 3 + b[p + 2] * NAVIS_RECORD + 1;
  if (b.length - p < length) return undefined;
  return { length, ack: navisArrayAck(b[p + 2]) };
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
  return new Promise((resolve) =>
    server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => resolve((server.address() as AddressInfo).port)),
  );
}

serveCommands({
  async start(): Promise<Record<BenchProtocol, number>> {
    return {
      teltonika: await listen(teltonika),
      gt06: await listen(gt06),
      gl200: await listen(gl200),
      ruptela: await listen(ruptela),
      wialon: await listen(wialon),
      navis: await listen(navis),
    };
  },
});
