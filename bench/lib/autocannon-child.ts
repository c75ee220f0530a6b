/**
 * HTTP load generator process: autocannon's programmatic API, one run per `run` command, with the
 * CPU this process used during the run (to show whether the generator saturated).
 */
import autocannon, { type Options } from 'autocannon';
import { serveCommands } from './child.js';

export interface LoadResult {
  requestsPerSec: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** CPU used by this generator process, as % of one core */
  generatorCpuPct: number;
  seconds: number;
}

serveCommands({
  async run(o: Options): Promise<LoadResult> {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const r = await autocannon(o);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    return {
      requestsPerSec: r.requests.average,
      total: r['2xx'] + r.non2xx,
      non2xx: r.non2xx,
      errors: r.errors,
      timeouts: r.timeouts,
      latencyP50Ms: r.latency.p50,
      latencyP99Ms: r.latency.p99,
      generatorCpuPct: ((cpu.user + cpu.system) / 1000 / (seconds * 1000)) * 100,
      seconds,
    };
  },
});
