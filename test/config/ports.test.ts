import { readFileSync } from 'node:fs';
import test from 'ava';
import { PROTOCOL_DEFAULT_PORTS } from '../../config/config.js';
import { protocols } from '../../protocols/index.js';

/** docs/contract.md §1 "Usual protocol ports", as written there. */
const CONTRACT_PORTS = `teltonika 5027, gt06 5023, h02 5013, gps103 5001, tk103 5002, jt808 5015, gl200 5004,
meitrack 5020, suntech 5011, watch 5093, ruptela 5046, xexun 5006, totem 5007, osmand 5055 (HTTP).`;

const GATEWAY_PAGE = readFileSync(new URL('../../docs/tracker-gateway.md', import.meta.url), 'utf8');

test('config.PROTOCOL_DEFAULT_PORTS: every usual port of docs/contract.md §1, and no other', (t) => {
  const contract = Object.fromEntries(
    [...CONTRACT_PORTS.matchAll(/([a-z0-9]+) (\d+)/g)].map(([, name, port]) => [name, Number(port)]),
  );
  t.is(Object.keys(contract).length, 14);
  t.deepEqual({ ...PROTOCOL_DEFAULT_PORTS }, contract);
});

test('config.PROTOCOL_DEFAULT_PORTS: docs/tracker-gateway.md gives each protocol the same port', (t) => {
  const text = GATEWAY_PAGE;
  const readme: Record<string, number> = {};
  // the table rows: | `gt06` | 5023 | TCP | ...
  for (const [, name, port] of text.matchAll(/^\| `([a-z0-9]+)` \| (\d+) \|/gm)) readme[name] = Number(port);
  // the protocols without a decoder: `tk103` (5002), ...
  for (const [, name, port] of text.matchAll(/`([a-z0-9]+)`\s+\((\d+)\)/g)) readme[name] = Number(port);
  t.deepEqual(readme, { ...PROTOCOL_DEFAULT_PORTS });
});

test('config.PROTOCOL_DEFAULT_PORTS: every protocol with a decoder has its usual port there', (t) => {
  const missing = Object.keys(protocols).filter((name) => !Object.hasOwn(PROTOCOL_DEFAULT_PORTS, name));
  t.deepEqual(missing, []);
});
