/**
 * MQTT 3.1.1 packets encoded by hand, for the MQTT benchmarks (before the clock starts) and the
 * tests' raw clients (OASIS MQTT 3.1.1 §2–3): CONNECT, PUBLISH QoS 1, SUBSCRIBE, PUBACK; and the few checks the raw
 * socket clients need to read CONNACK, SUBACK, PUBACK and PUBLISH.
 */

/** Remaining Length, §2.2.3: 7 bits per byte, high bit = more. */
export function remainingLength(n: number): Buffer {
  const out: number[] = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return Buffer.from(out);
}

const str = (s: string): Buffer => {
  const b = Buffer.from(s, 'utf8');
  const len = Buffer.alloc(2);
  len.writeUInt16BE(b.length);
  return Buffer.concat([len, b]);
};

const packet = (firstByte: number, body: Buffer): Buffer =>
  Buffer.concat([Buffer.from([firstByte]), remainingLength(body.length), body]);

export function connectPacket(o: {
  clientId: string;
  username?: string;
  password?: string;
  keepaliveS?: number;
  clean?: boolean;
}): Buffer {
  let flags = o.clean === false ? 0 : 0x02;
  if (o.username !== undefined) flags |= 0x80;
  if (o.password !== undefined) flags |= 0x40;
  const keepalive = Buffer.alloc(2);
  keepalive.writeUInt16BE(o.keepaliveS ?? 0);
  const parts = [str('MQTT'), Buffer.from([4, flags]), keepalive, str(o.clientId)];
  if (o.username !== undefined) parts.push(str(o.username));
  if (o.password !== undefined) parts.push(str(o.password));
  return packet(0x10, Buffer.concat(parts));
}

/** PUBLISH, QoS 1, no DUP, no RETAIN. */
export function publishQos1Packet(topic: string, packetId: number, payload: Buffer): Buffer {
  const id = Buffer.alloc(2);
  id.writeUInt16BE(packetId);
  return packet(0x32, Buffer.concat([str(topic), id, payload]));
}

export function subscribePacket(packetId: number, filter: string, qos: 0 | 1 | 2): Buffer {
  const id = Buffer.alloc(2);
  id.writeUInt16BE(packetId);
  return packet(0x82, Buffer.concat([id, str(filter), Buffer.from([qos])]));
}

export function pubackPacket(packetId: number): Buffer {
  return Buffer.from([0x40, 0x02, packetId >> 8, packetId & 0xff]);
}

export const PUBACK_TYPE = 0x40;
export const CONNACK_TYPE = 0x20;
export const SUBACK_TYPE = 0x90;

/**
 * One location message of the benchmark, always the same length for a given device id: a unique
 * `dateTime` (one second apart per message index) and a position varying with the index.
 */
const FIRST_FIX_MS = Date.UTC(2025, 0, 1);
export function locationPayload(index: number): Buffer {
  const dateTime = new Date(FIRST_FIX_MS + index * 1000).toISOString();
  const latitude = (40.4168 + (index % 1000) * 1e-5).toFixed(6);
  const longitude = (-3.7038 - (index % 700) * 1e-5).toFixed(6);
  return Buffer.from(`{"dateTime":"${dateTime}","latitude":${latitude},"longitude":${longitude}}`);
}

/**
 * Splits complete packets off `buf` (fixed header + Remaining Length). Returns the packets' first
 * bytes and bodies, and what is left over (an incomplete packet).
 */
export function splitPackets(buf: Buffer, onPacket: (firstByte: number, body: Buffer) => void): Buffer {
  let at = 0;
  for (;;) {
    if (buf.length - at < 2) break;
    let len = 0;
    let mul = 1;
    let i = at + 1;
    let complete = false;
    for (; i < buf.length && i < at + 5; i++) {
      len += (buf[i] & 0x7f) * mul;
      mul *= 128;
      if ((buf[i] & 0x80) === 0) {
        complete = true;
        i++;
        break;
      }
    }
    if (!complete || buf.length - i < len) break;
    onPacket(buf[at], buf.subarray(i, i + len));
    at = i + len;
  }
  return at === buf.length ? EMPTY : buf.subarray(at);
}

const EMPTY = Buffer.alloc(0);
