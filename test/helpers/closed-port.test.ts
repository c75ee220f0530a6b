/**
 * The tests' "receiver that is down" (closedPort): a port that stays closed while a test counts on
 * it, whatever other tests start meanwhile. A port bound with `listen(0)` and released could be
 * handed to the next `listen(0)`: two outage tests then shared one port, and the SMTP relay that
 * should have refused answered as the other test's receiver (four mails where one was expected).
 */
import test from 'ava';
import net from 'node:net';
import { closedPort, connectError, ephemeralRange } from './receivers.js';

test('closedPort: ports handed out at once differ, are refused, and lie outside the range listen(0) picks from', async (t) => {
  const ports = await Promise.all(Array.from({ length: 20 }, () => closedPort()));
  t.is(new Set(ports).size, ports.length);
  for (const port of ports) t.is(await connectError(port), 'ECONNREFUSED', `port ${port}`);
  const [low, high] = ephemeralRange();
  for (const port of ports) t.true(port < low || port > high, `port ${port} is in the ephemeral range ${low}-${high}`);
  // and listen(0) never lands on one, however many servers start meanwhile
  const servers = await Promise.all(
    Array.from(
      { length: 200 },
      () =>
        new Promise<net.Server>((resolve) => {
          const s = net.createServer();
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const taken = new Set(servers.map((s) => (s.address() as net.AddressInfo).port));
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  t.deepEqual(
    ports.filter((p) => taken.has(p)),
    [],
  );
});
