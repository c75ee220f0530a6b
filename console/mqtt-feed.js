// The account's live feed: MQTT 3.1.1 over WebSocket, only what a subscriber needs (CONNECT,
// SUBSCRIBE, UNSUBSCRIBE, PUBLISH in, PINGREQ), so the page ships a few KB instead of a full client.

const enc = new TextEncoder();
const dec = new TextDecoder();

const str = (s) => {
  const b = enc.encode(s);
  return [b.length >> 8, b.length & 255, ...b];
};

function remainingLength(n) {
  const out = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 128;
    out.push(byte);
  } while (n > 0);
  return out;
}

const packet = (first, body) => new Uint8Array([first, ...remainingLength(body.length), ...body]);

/** Does `topic` match the MQTT filter (with + and #)? */
export function matches(filter, topic) {
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length || (f[i] !== '+' && f[i] !== t[i])) return false;
  }
  return f.length === t.length;
}

export class LiveFeed {
  /**
   * @param {{url: string, userName: string, password: () => string, onState: (state: string) => void}} o
   * onState gets 'connecting', 'live' or 'down'.
   */
  constructor(o) {
    this.o = o;
    /** filter -> Set of handlers */
    this.subs = new Map();
    this.nextId = 1;
    this.retryMs = 1000;
    this.stopped = false;
    this.connected = false;
    this.connect();
  }

  /** Calls handler(topic, message) for each JSON message on `filter`; returns the unsubscribe. */
  subscribe(filter, handler) {
    let set = this.subs.get(filter);
    if (!set) {
      set = new Set();
      this.subs.set(filter, set);
      if (this.connected) this.send(packet(0x82, [...this.id(), ...str(filter), 0]));
    }
    set.add(handler);
    return () => {
      set.delete(handler);
      if (set.size || this.subs.get(filter) !== set) return;
      this.subs.delete(filter);
      if (this.connected) this.send(packet(0xa2, [...this.id(), ...str(filter)]));
    };
  }

  stop() {
    this.stopped = true;
    clearInterval(this.ping);
    this.ws?.close();
  }

  id() {
    this.nextId = (this.nextId % 0xffff) + 1;
    return [this.nextId >> 8, this.nextId & 255];
  }

  send(bytes) {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(bytes);
  }

  connect() {
    this.o.onState('connecting');
    this.buffer = new Uint8Array(0);
    const ws = new WebSocket(this.o.url, 'mqtt');
    this.ws = ws;
    ws.binaryType = 'arraybuffer';
    ws.onopen = () => {
      const clientId = `${this.o.userName}-console-${Math.random().toString(36).slice(2, 10)}`;
      // protocol MQTT level 4; flags: user name, password, clean session; keep-alive 60 s
      const body = [
        ...str('MQTT'),
        4,
        0xc2,
        0,
        60,
        ...str(clientId),
        ...str(this.o.userName),
        ...str(this.o.password()),
      ];
      ws.send(packet(0x10, body));
    };
    ws.onmessage = (e) => this.received(new Uint8Array(e.data));
    ws.onclose = () => {
      this.connected = false;
      clearInterval(this.ping);
      if (this.stopped) return;
      this.o.onState('down');
      setTimeout(() => this.connect(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 30_000);
    };
  }

  received(chunk) {
    const all = new Uint8Array(this.buffer.length + chunk.length);
    all.set(this.buffer);
    all.set(chunk, this.buffer.length);
    let at = 0;
    while (at < all.length) {
      let length = 0;
      let multiplier = 1;
      let i = at + 1;
      for (; i < all.length; i++) {
        length += (all[i] & 127) * multiplier;
        multiplier *= 128;
        if (!(all[i] & 128)) break;
      }
      if (i >= all.length || i + 1 + length > all.length) break;
      this.handle(all[at], all.subarray(i + 1, i + 1 + length));
      at = i + 1 + length;
    }
    this.buffer = all.slice(at);
  }

  handle(first, body) {
    const type = first >> 4;
    if (type === 2) {
      if (body[1] !== 0) {
        // refused (a token that expired, say): no retry loop against a refusal
        this.stopped = true;
        this.o.onState('down');
        this.ws.close();
        return;
      }
      this.connected = true;
      this.retryMs = 1000;
      for (const filter of this.subs.keys()) this.send(packet(0x82, [...this.id(), ...str(filter), 0]));
      this.ping = setInterval(() => this.send(new Uint8Array([0xc0, 0])), 30_000);
      this.o.onState('live');
    } else if (type === 3) {
      const qos = (first >> 1) & 3;
      const topicLength = (body[0] << 8) | body[1];
      const topic = dec.decode(body.subarray(2, 2 + topicLength));
      let at = 2 + topicLength;
      if (qos > 0) {
        this.send(new Uint8Array([0x40, 2, body[at], body[at + 1]]));
        at += 2;
      }
      let message;
      try {
        message = JSON.parse(dec.decode(body.subarray(at)));
      } catch {
        return;
      }
      for (const [filter, handlers] of this.subs) {
        if (matches(filter, topic)) for (const handler of handlers) handler(topic, message);
      }
    }
  }
}
