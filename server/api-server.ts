/** The REST API's HTTP server: api/ builds the Koa app only, the server is made here, beside every other listener. */
import http from 'node:http';
import type { Config } from '../config/config.js';
import type { Clock } from '../core/clock.js';
import type { Metrics } from '../core/metrics/metrics.js';
import { createApi } from '../api/app.js';
import { listen, type Listener } from '../gateway/shared/listen.js';
import type { Services } from './services.js';

export interface ApiServerOptions {
  clock: Clock;
  metrics?: Metrics;
  /** true until every listener is bound and the first account exists: health says "starting", the rest 503 */
  starting(): boolean;
  ping(): Promise<void>;
  /** why storage refuses writes now, if it does */
  writesFailing(): string | undefined;
  /** why free space where the database lives is too low, if it is */
  storageLow?(): string | undefined;
  /** the MQTT WebSocket port, once bound (the console's live feed) */
  mqttWsPort(): number | undefined;
}

export async function listenApi(config: Readonly<Config>, services: Services, o: ApiServerOptions): Promise<Listener> {
  const api = createApi({
    ...services,
    clock: o.clock,
    logger: services.logger,
    bodyLimitBytes: config.bodyLimitBytes,
    starting: o.starting,
    ping: o.ping,
    writesFailing: o.writesFailing,
    storageLow: o.storageLow,
    unknownDevices: services.directory.recentUnknown,
    onTimeZoneChanged: (accountId) => services.events.accountChanged(accountId),
    metrics: o.metrics,
    console: { tileUrl: config.consoleTileUrl, mqttWsPort: o.mqttWsPort },
  });
  const server = http.createServer(api.callback());
  server.keepAliveTimeout = 65_000;
  return listen(server, { port: config.httpPort, host: config.host });
}
