/**
 * The forwarding benchmark's "target alone" measure, in its own process: how many messages the
 * AMQP broker of this machine takes when nothing else runs, published as an AMQP forward publishes
 * them (persistent, `contentType`, `messageId`, `type`, on a confirm channel, to the bench's topic
 * exchange with a routing key per device) and counted when confirmed. The bodies (forward
 * messages of the size trackgate sends) and routing keys are built before the clock starts; up to
 * `window` messages are unconfirmed at a time, so the broker always has work. Reports its own CPU,
 * which must stay well below a core for the broker to be what limits.
 */
import { performance } from 'node:perf_hooks';
import amqp from 'amqplib';
import { serveCommands } from './child.js';

interface Prepared {
  bodies: Buffer[];
  keys: string[];
}
let prepared: Prepared | undefined;

/** A forward message as trackgate sends one for a Teltonika location (about the same bytes). */
function body(id: number, deviceId: string): Buffer {
  const location = {
    deviceId,
    dateTime: new Date(1_763_800_000_000 + id * 1000).toISOString(),
    latitude: 54.6872 + (id % 1000) / 1e5,
    longitude: 25.2797 + (id % 997) / 1e5,
    speed: 42,
    course: 181,
    altitude: 112,
    satellites: 11,
    valid: true,
    protocol: 'teltonika',
    attributes: { ignition: true, power: 12.64, battery: 4.02, odometer: 1234567, io21: 4, io66: 12640 },
  };
  return Buffer.from(JSON.stringify({ id, event: 'location', deviceId, location }));
}

serveCommands({
  prepare(args: { devices: string[]; messages: number }) {
    const bodies: Buffer[] = [];
    const keys: string[] = [];
    for (let i = 0; i < args.messages; i++) {
      const device = args.devices[i % args.devices.length];
      bodies.push(body(i + 1, device));
      keys.push(`trackgate.${device}.location`);
    }
    prepared = { bodies, keys };
    return bodies.length;
  },
  /** Publishes for `warmupMs + durationMs`; counts the confirms of the last `durationMs`. */
  async publish(args: { url: string; exchange: string; warmupMs: number; durationMs: number; window: number }) {
    if (!prepared) throw new Error('prepare first');
    const { bodies, keys } = prepared;
    const conn = await amqp.connect(args.url, { noDelay: true });
    try {
      const ch = await conn.createConfirmChannel();
      let confirmed = 0;
      let nacked = 0;
      let inFlight = 0;
      let i = 0;
      let resume: (() => void) | undefined;
      const onConfirm = (err: unknown) => {
        inFlight--;
        if (err) nacked++;
        else confirmed++;
        if (resume && inFlight <= args.window / 2) {
          const r = resume;
          resume = undefined;
          r();
        }
      };
      const start = performance.now();
      const windowStart = start + args.warmupMs;
      const end = windowStart + args.durationMs;
      let atWindow: { confirmed: number; cpu: NodeJS.CpuUsage; t: number } | undefined;
      while (performance.now() < end) {
        if (!atWindow && performance.now() >= windowStart)
          atWindow = { confirmed, cpu: process.cpuUsage(), t: performance.now() };
        while (inFlight < args.window) {
          const n = i++ % bodies.length;
          inFlight++;
          ch.publish(
            args.exchange,
            keys[n],
            bodies[n],
            { persistent: true, contentType: 'application/json', messageId: String(i), type: 'location' },
            onConfirm,
          );
        }
        await new Promise<void>((r) => (resume = r));
      }
      const t = performance.now();
      const at = atWindow ?? { confirmed: 0, cpu: process.cpuUsage(), t: start };
      const cpu = process.cpuUsage(at.cpu);
      const seconds = (t - at.t) / 1000;
      await ch.waitForConfirms().catch(() => {});
      return {
        messagesPerSec: (confirmed - at.confirmed) / seconds,
        publisherCpuPct: ((cpu.user + cpu.system) / 1000 / (seconds * 1000)) * 100,
        nacked,
        published: i,
      };
    } finally {
      await conn.close().catch(() => {});
    }
  },
});
