/**
 * The subscriber that shows what a relaying broker (Mosquitto) delivers, in its own process: one
 * raw socket, SUBSCRIBE to a filter at QoS 1, a PUBACK for every PUBLISH received (the PUBACKs of
 * one socket chunk in one write), received messages counted per 100 ms on the epoch clock so the
 * generator's window can be lined up with them.
 */
import net from 'node:net';
import { serveCommands } from './child.js';
import {
  CONNACK_TYPE,
  SUBACK_TYPE,
  connectPacket,
  splitPackets,
  subscribePacket,
} from '../../test/helpers/mqtt-packets.js';

export interface SubscriberStartArgs {
  host: string;
  port: number;
  filter: string;
  clientId: string;
}

export interface SubscriberCounts {
  received: number;
  /** QoS of the deliveries: {"1": n} */
  byQos: Record<string, number>;
  errors: number;
  firstError?: string;
  cpuMs: number;
}

const BUCKET_MS = 100;
const epochNow = (): number => performance.timeOrigin + performance.now();
let socket: net.Socket | undefined;
let received = 0;
let errors = 0;
let firstError: string | undefined;
const byQos: Record<string, number> = {};
/** received per 100 ms bucket, keyed by Math.floor(epoch ms / 100) */
const buckets = new Map<number, number>();

function start(a: SubscriberStartArgs): Promise<{ subscribed: true; grantedQos: number }> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: a.host, port: a.port, noDelay: true });
    socket = s;
    let left: Buffer = Buffer.alloc(0);
    let state: 'connack' | 'suback' | 'ready' = 'connack';
    s.on('connect', () => s.write(connectPacket({ clientId: a.clientId, keepaliveS: 0 })));
    s.on('error', (e) => {
      errors++;
      firstError ??= e.message;
      if (state !== 'ready') reject(e);
    });
    s.on('data', (chunk: Buffer) => {
      const buf = left.length ? Buffer.concat([left, chunk]) : chunk;
      const acks: number[] = [];
      let n = 0;
      left = splitPackets(buf, (first, body) => {
        const type = first & 0xf0;
        if (type === 0x30) {
          const qos = (first >> 1) & 3;
          byQos[qos] = (byQos[qos] ?? 0) + 1;
          n++;
          if (qos > 0) {
            const topicLen = body.readUInt16BE(0);
            acks.push(body.readUInt16BE(2 + topicLen));
          }
        } else if (type === CONNACK_TYPE && state === 'connack') {
          if (body[1] !== 0) return reject(new Error(`CONNACK return code ${body[1]}`));
          state = 'suback';
          s.write(subscribePacket(1, a.filter, 1));
        } else if (type === SUBACK_TYPE && state === 'suback') {
          state = 'ready';
          resolve({ subscribed: true, grantedQos: body[2] });
        } else {
          errors++;
          firstError ??= `unexpected packet type 0x${first.toString(16)}`;
        }
      });
      if (n) {
        received += n;
        const b = Math.floor(epochNow() / BUCKET_MS);
        buckets.set(b, (buckets.get(b) ?? 0) + n);
      }
      if (acks.length) {
        const out = Buffer.allocUnsafe(acks.length * 4);
        for (let i = 0; i < acks.length; i++) {
          out[i * 4] = 0x40;
          out[i * 4 + 1] = 2;
          out.writeUInt16BE(acks[i], i * 4 + 2);
        }
        s.write(out);
      }
    });
  });
}

function counts(): SubscriberCounts {
  const cpu = process.cpuUsage();
  return { received, byQos, errors, firstError, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/** Messages received between two epoch instants (to the 100 ms bucket). */
function receivedBetween(a: { fromEpochMs: number; toEpochMs: number }): number {
  let n = 0;
  const from = Math.floor(a.fromEpochMs / BUCKET_MS);
  const to = Math.floor(a.toEpochMs / BUCKET_MS);
  for (const [b, c] of buckets) if (b >= from && b < to) n += c;
  return n;
}

/** Waits until `total` messages have arrived or `maxMs` has passed. */
async function waitFor(a: { total: number; maxMs: number }): Promise<SubscriberCounts & { waitedMs: number }> {
  const t0 = performance.now();
  while (received < a.total && performance.now() - t0 < a.maxMs) await new Promise((r) => setTimeout(r, 20));
  return { ...counts(), waitedMs: performance.now() - t0 };
}

function stop(): void {
  socket?.end(Buffer.from([0xe0, 0x00]));
}

serveCommands({ start, counts, receivedBetween, waitFor, stop });
