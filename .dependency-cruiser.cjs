/**
 * The import rules (docs/ARCHITECTURE.md "Who may import whom"), checked in `npm test`.
 * @type {import('dependency-cruiser').IConfiguration}
 */
// (^|/): node_modules may be a link to another checkout's (a git worktree), resolved to ../…/node_modules
const lib = (names) => `(^|/)node_modules/(${names.join('|')})/`;

module.exports = {
  forbidden: [
    {
      name: 'config-imports-nothing-of-ours',
      severity: 'error',
      from: { path: '^config/' },
      to: { path: '^(protocols|core|gateway|api)/|^(main|gateway-main|cli)\\.ts$' },
    },
    {
      name: 'protocols-are-pure',
      severity: 'error',
      from: { path: '^protocols/' },
      to: { path: '^(gateway|api|config)/|^core/(?!model/)|^(main|gateway-main|cli)\\.ts$' },
    },
    {
      name: 'protocols-take-only-types-from-core-model',
      severity: 'error',
      from: { path: '^protocols/' },
      to: { path: '^core/model/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'protocols-no-io',
      severity: 'error',
      from: { path: '^protocols/' },
      to: {
        dependencyTypes: ['core'],
        path: '^(net|dgram|http|https|tls|fs|fs/promises|child_process|worker_threads|cluster)$',
      },
    },
    {
      name: 'protocols-no-libraries',
      severity: 'error',
      from: { path: '^protocols/' },
      to: { dependencyTypes: ['npm', 'npm-dev'] },
    },
    {
      name: 'core-model-imports-nothing',
      severity: 'error',
      from: { path: '^core/model/' },
      to: { pathNot: '^core/model/' },
    },
    {
      name: 'core-imports-only-core',
      severity: 'error',
      from: { path: '^core/' },
      to: { path: '^(protocols|gateway|api|config)/|^(main|gateway-main|cli)\\.ts$' },
    },
    {
      name: 'gateway-not-api',
      severity: 'error',
      from: { path: '^gateway/' },
      to: { path: '^(api|config)/|^(main|gateway-main|cli)\\.ts$' },
    },
    // server/: the core's start-up policy (storage, Redis, listeners, the device locator, signals), for the composition roots only
    {
      name: 'server-only-from-the-roots',
      severity: 'error',
      from: { path: '^(?!server/|(main|gateway-main|cli)\\.ts$)' },
      to: { path: '^server/' },
    },
    {
      name: 'server-not-the-roots',
      severity: 'error',
      from: { path: '^server/' },
      to: { path: '^(main|gateway-main|cli)\\.ts$' },
    },
    {
      name: 'api-not-gateway-or-protocols',
      severity: 'error',
      from: { path: '^api/' },
      to: { path: '^(gateway|protocols|config)/|^(main|gateway-main|cli)\\.ts$' },
    },
    // Node's servers stay in the gateway's corners (types may be named anywhere): net and tls in the one
    // stream server (trackers and MQTT), dgram in the UDP listener, http in the OsmAnd server, MQTT's
    // WebSocket port and server/api-server.ts, which serves the Koa app of api/ (api/ builds the app, never a
    // server). server/services.ts also opens the SMTP socket with net (see connectNoDelay). The one HTTP client with its
    // own connection and answer timeouts is the webhook forward's (core/forward/forwarder.webhook.ts).
    {
      name: 'net-only-in-stream-server',
      severity: 'error',
      from: { path: '^(?!gateway/shared/stream-server\\.ts$|server/services\\.ts$)' },
      to: { dependencyTypes: ['core'], dependencyTypesNot: ['type-only'], path: '^(node:)?net$' },
    },
    {
      name: 'tls-only-in-stream-server',
      severity: 'error',
      from: { path: '^(?!gateway/shared/stream-server\\.ts$)' },
      to: { dependencyTypes: ['core'], dependencyTypesNot: ['type-only'], path: '^(node:)?tls$' },
    },
    {
      name: 'dgram-only-in-gateway-udp',
      severity: 'error',
      from: { path: '^(?!gateway/udp/)' },
      to: { dependencyTypes: ['core'], dependencyTypesNot: ['type-only'], path: '^(node:)?dgram$' },
    },
    {
      name: 'http-only-in-http-listeners',
      severity: 'error',
      from: {
        path: '^(?!gateway/http/|gateway/mqtt/mqtt\\.listeners\\.ts$|server/api-server\\.ts$|core/forward/forwarder\\.webhook\\.ts$)',
      },
      to: { dependencyTypes: ['core'], dependencyTypesNot: ['type-only'], path: '^(node:)?(http|https|http2)$' },
    },
    {
      name: 'aedes-only-in-gateway-mqtt',
      severity: 'error',
      from: { path: '^(?!gateway/mqtt/)' },
      to: { path: lib(['aedes', 'aedes-[^/]+', 'mqemitter[^/]*', 'ws']) },
    },
    // the forwards' clients: the mqtt package only in *.mqtt.ts files (the forward's adapter), amqplib only in *.amqp.ts
    {
      name: 'mqtt-client-only-in-mqtt-files',
      severity: 'error',
      from: { path: '^(?!.+\\.mqtt\\.ts$)' },
      to: { path: lib(['mqtt']), dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'amqplib-only-in-amqp-files',
      severity: 'error',
      from: { path: '^(?!.+\\.amqp\\.ts$)' },
      to: { path: lib(['amqplib']), dependencyTypesNot: ['type-only'] },
    },
    // the link between the core and its gateway processes: net-ipc and cluster stay in gateway/ipc/
    {
      name: 'net-ipc-only-in-gateway-ipc',
      severity: 'error',
      from: { path: '^(?!gateway/ipc/)' },
      to: { path: lib(['net-ipc', 'msgpackr']) },
    },
    {
      name: 'cluster-only-in-gateway-ipc',
      severity: 'error',
      from: { path: '^(?!gateway/ipc/)' },
      to: { dependencyTypes: ['core'], dependencyTypesNot: ['type-only'], path: '^(node:)?cluster$' },
    },
    {
      name: 'koa-only-in-api',
      severity: 'error',
      from: { path: '^(?!api/)' },
      to: { path: lib(['koa', '@koa/[^/]+', 'koa-[^/]+']) },
    },
    {
      name: 'knex-only-in-db-and-repositories',
      severity: 'error',
      from: { path: '^(?!core/db/|core/.+\\.repository\\.ts$)' },
      to: { path: lib(['knex', 'better-sqlite3', 'pg']), dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'ioredis-only-in-redis-files',
      severity: 'error',
      from: { path: '^(?!.+\\.redis\\.ts$)' },
      to: { path: lib(['ioredis']), dependencyTypesNot: ['type-only'] },
    },
    // pino in the two composition roots: the core's (main.ts) and a gateway process's (gateway-main.ts)
    {
      name: 'pino-only-in-main',
      severity: 'error',
      from: { path: '^(?!(gateway-)?main\\.ts$)' },
      to: { path: lib(['pino']) },
    },
    // prom-client formats GET /metrics in core/metrics/metrics.ts from the registry main.ts makes; every other part counts in core/metrics/counts.ts
    {
      name: 'prom-client-only-in-core-metrics',
      severity: 'error',
      from: { path: '^(?!core/metrics/metrics\\.ts$|main\\.ts$)' },
      to: { path: lib(['prom-client']), dependencyTypesNot: ['type-only'] },
    },
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js'],
    },
  },
};
