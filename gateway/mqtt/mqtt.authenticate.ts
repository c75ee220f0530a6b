/**
 * aedes' authenticate handler (node_modules/aedes/docs/Aedes.md "Handler: authenticate"): the CONNECT's user name and
 * password say who the client is (mqtt.auth.ts). A refusal carries its CONNACK return code
 * (MQTT 3.1.1 §3.2.2.3) as `returnCode`: 2, 4 or 5 as mqtt.auth.ts decides, 3 (server unavailable)
 * when the credentials could not be checked. A client let in gets its session (mqtt.sessions.ts)
 * and keeps its client id claimed until its connection closes.
 */
import type { AuthenticateError, Client } from 'aedes';
import type { MqttContext } from './mqtt.context.js';
import type { AuthResult } from './mqtt.auth.js';
import { PublishBucket } from './publish.limits.js';

type Done = (error: AuthenticateError | null, ok: boolean | null) => void;

export function authenticate(
  gw: MqttContext,
  client: Client,
  username: string | undefined,
  password: Buffer | undefined,
  done: Done,
): void {
  void login(gw, client, username, password).then((refusal) => done(refusal, refusal === null));
}

const refusal = (reason: string, returnCode: 2 | 3 | 4 | 5): AuthenticateError =>
  Object.assign(new Error(reason), { returnCode });

/** null: let in; otherwise the refusal to answer. Never throws. */
async function login(
  gw: MqttContext,
  client: Client,
  username: string | undefined,
  password: Buffer | undefined,
): Promise<AuthenticateError | null> {
  const connection = gw.sessions.connection(client);
  const remoteAddress = connection?.remoteAddress ?? null;
  let r: AuthResult;
  try {
    r = await gw.auth.authenticate(client.id, username, password, remoteAddress);
  } catch (err) {
    gw.logger.error({ err, clientId: client.id }, 'mqtt: authentication failed with an error');
    return refusal('authentication unavailable', 3);
  }
  if (!r.ok) {
    gw.logger.info(
      {
        clientId: client.id,
        userName: username,
        deviceId: r.deviceId,
        remoteAddress,
        returnCode: r.returnCode,
        reason: r.reason,
      },
      'mqtt: connection refused',
    );
    return refusal(r.reason, r.returnCode);
  }
  const holding = r.holding;
  if (holding) {
    const stream = connection?.stream;
    if (!stream || client.closed || stream.destroyed) gw.auth.release(holding);
    else stream.once('close', () => gw.auth.release(holding));
  }
  gw.sessions.open(client, {
    identity: r.identity,
    bucket: new PublishBucket(gw.rate, gw.clock),
    tail: Promise.resolve(),
    remoteAddress,
  });
  return null;
}
