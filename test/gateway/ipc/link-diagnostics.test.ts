import test from 'ava';
import { generate } from 'selfsigned';
import { startServer, type TestServer } from '../../helpers/server.js';
import { capturingLogger, type CapturingLogger } from '../../helpers/capture-logger.js';
import { until } from '../../helpers/wait.js';
import { systemClock } from '../../../core/clock.js';
import { startCoreLink, type CoreLink } from '../../../gateway/ipc/core-link.server.js';
import { connectCoreLink, RECONNECT_MS, type CoreLinkClientOptions } from '../../../gateway/ipc/core-link.client.js';
import { caProblem } from '../../../gateway-main.js';

const secret = 'a-secret-of-this-test-0123456789';
type T = { teardown(fn: () => unknown): void };

/** A self-signed certificate for `name`, and for 127.0.0.1 too when `ip` (by default for localhost). */
async function certificate(name: string, ip = name === 'localhost'): Promise<{ cert: string; key: string }> {
  const pems = await generate([{ name: 'commonName', value: name }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      {
        name: 'subjectAltName',
        altNames: ip
          ? [
              { type: 2, value: name },
              { type: 7, ip: '127.0.0.1' },
            ]
          : [{ type: 2, value: name }],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

async function core(
  t: T,
  s: TestServer,
  tls?: { cert: string; key: string },
): Promise<{ link: CoreLink; logger: CapturingLogger }> {
  const logger = capturingLogger();
  const link = await startCoreLink({
    host: '127.0.0.1',
    port: 0,
    secret,
    ...s.running.services,
    logger,
    ...(tls && { tls: { cert: Buffer.from(tls.cert), key: Buffer.from(tls.key) } }),
  });
  t.teardown(() => link.close());
  return { link, logger };
}

/** A gateway's link to `port`, logging to a logger of its own. */
function gateway(t: T, port: number, more: Partial<CoreLinkClientOptions> = {}) {
  const logger = capturingLogger();
  const client = connectCoreLink({
    host: '127.0.0.1',
    port,
    secret,
    clock: systemClock,
    logger,
    hello: () => ({ ports: null, online: [] }),
    onDeliver: () => undefined,
    onDrop: () => undefined,
    ...more,
  });
  t.teardown(() => client.close());
  return { client, logger };
}

const errors = (logger: CapturingLogger, pattern: RegExp) => logger.at('error', pattern).length;

test('gateway.ipc link: a TLS mistake on an edge gateway is said once, at error level, naming the setting to change; the core says why a handshake failed', async (t) => {
  const s = await startServer('sqlite');
  t.teardown(() => s.stop());
  const pair = await certificate('localhost');
  const tlsCore = await core(t, s, pair);
  const plainCore = await core(t, s);

  // without TLS against the core's TLS link
  const plain = gateway(t, tlsCore.link.port!);
  await until(
    'the plain gateway says what to set',
    () =>
      errors(
        plain.logger,
        /closed the connection without answering: if its link uses TLS .*start this gateway with --tls or TRACKGATE_GATEWAY_TLS_CA/,
      ) === 1,
  );
  await until(
    'the core logs the failed handshake',
    () => tlsCore.logger.at('warn', /TLS handshake failed/).length >= 1,
  );
  // with TLS, trusting the system's authorities only, against a self-signed certificate
  const untrusting = gateway(t, tlsCore.link.port!, { tls: {} });
  await until(
    'the gateway names the CA setting',
    () =>
      errors(
        untrusting.logger,
        /does not trust the core's TLS certificate \(DEPTH_ZERO_SELF_SIGNED_CERT.*set TRACKGATE_GATEWAY_TLS_CA/,
      ) === 1,
  );
  // with TLS against a link without it
  const tlsToPlain = gateway(t, plainCore.link.port!, { tls: { ca: pair.cert } });
  await until(
    'the gateway says the core has no TLS',
    () => errors(tlsToPlain.logger, /does not answer TLS on its link port/) === 1,
  );
  // a certificate for another name
  const other = await certificate('core.example.com');
  const otherCore = await core(t, s, other);
  const wrongName = gateway(t, otherCore.link.port!, { tls: { ca: other.cert } });
  await until(
    'the gateway says the certificate does not name its host',
    () => errors(wrongName.logger, /does not name 127\.0\.0\.1/) === 1,
  );
  // a certificate for localhost only: a link to 127.0.0.1 sends no ServerName, and the certificate is still checked against the address
  const hostOnly = await certificate('localhost', false);
  const hostOnlyCore = await core(t, s, hostOnly);
  const byAddress = gateway(t, hostOnlyCore.link.port!, { tls: { ca: hostOnly.cert } });
  await until(
    'the gateway says the certificate does not name the address',
    () => errors(byAddress.logger, /does not name 127\.0\.0\.1/) === 1,
  );

  // each retried several times meanwhile, and said it once
  await new Promise((r) => setTimeout(r, RECONNECT_MS * 4));
  for (const g of [plain, untrusting, tlsToPlain, wrongName, byAddress]) {
    t.is(g.logger.at('error', /core link:/).length, 1);
    t.false(g.client.isUp());
  }
  // the right CA connects
  const right = gateway(t, tlsCore.link.port!, { tls: { ca: pair.cert } });
  await right.client.ready();
  t.is(right.logger.at('error', /core link:/).length, 0);
});

test('gateway.ipc link: a gateway that cannot reach the core says so once, not at every retry', async (t) => {
  const s = await startServer('sqlite');
  t.teardown(() => s.stop());
  const { link } = await core(t, s);
  const port = link.port!;
  await link.close();
  const g = gateway(t, port);
  await until(
    'it says the core cannot be reached',
    () => g.logger.at('warn', /core link: cannot reach the core \(.*ECONNREFUSED/).length === 1,
  );
  await new Promise((r) => setTimeout(r, RECONNECT_MS * 4));
  t.is(g.logger.at('warn', /cannot reach the core/).length, 1);
});

test('gateway.ipc link: a CA file without a certificate in it is named as such', (t) => {
  t.regex(caProblem('not a certificate\n')!, /holds no PEM certificate/);
  t.regex(caProblem('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n')!, /certificate 1 cannot be read/);
  t.is(caProblem(''), 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
});
