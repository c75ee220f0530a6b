/**
 * A connected API user keeps its live feed only while its credentials still log in (docs/contract.md
 * §3 "MQTT": the feed is for the account's users): checked again when the user changes (deleted,
 * new API key, group or privileges: the event bus, also for changes made on another instance) and
 * every `everyMs` (expiry, disabled). A user who may no longer log in is disconnected; one whose
 * group changed keeps its connection with the new scope, and what waited in its outbox under the
 * old scope is dropped.
 */
import type { Client } from 'aedes';
import type { EventBus } from '../../core/events/event-bus.js';
import type { Principal } from '../../core/model/user.js';
import type { MqttContext } from './mqtt.context.js';

/** Starts the re-checks; answers the function that stops them. */
export function watchUsers(gw: MqttContext, events: EventBus, everyMs: number): () => void {
  const recheckUserId = (userId: string) => {
    for (const client of gw.sessions.clientsOf(userId)) void recheckUser(gw, client);
  };
  // after every listener of the event ran (the tokens service forgets its cached principal in one)
  const offUserChanged = events.onUserChanged((userId) => setImmediate(recheckUserId, userId));
  const timer = setInterval(() => {
    for (const userId of [...gw.sessions.userIds()]) recheckUserId(userId);
  }, everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    offUserChanged();
  };
}

/** Never throws: a failed check is logged and made again later. */
export async function recheckUser(gw: MqttContext, client: Client): Promise<void> {
  const session = gw.sessions.get(client);
  const identity = session?.identity;
  const live = session?.live;
  if (!live || identity?.kind !== 'user' || client.closed) return;
  let principal: Principal | null;
  try {
    principal = await gw.auth.recheck(identity);
  } catch (err) {
    gw.logger.warn({ err, clientId: client.id }, 'mqtt: re-checking a user failed; checked again later');
    return;
  }
  if (client.closed) return;
  if (!principal) {
    gw.logger.info(
      { clientId: client.id, userId: identity.principal.userId },
      'mqtt: user may no longer log in; closing its connection',
    );
    client.close();
    return;
  }
  if (principal.groupId !== live.principal.groupId) live.outbox.clear();
  identity.principal = principal;
  live.principal = principal;
}
