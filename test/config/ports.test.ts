import { readFileSync } from 'node:fs';
import test from 'ava';
import { PROTOCOL_DEFAULT_PORTS } from '../../config/config.js';
import { protocols } from '../../protocols/index.js';

/** docs/contract.md §1 "Usual protocol ports", as written there. */
const CONTRACT_PORTS = /\*\*Usual protocol ports\*\*([^*]+)`config\/config\.ts`/.exec(
  readFileSync(new URL('../../docs/contract.md', import.meta.url), 'utf8'),
)?.[1];

const GATEWAY_PAGE = readFileSync(new URL('../../docs/tracker-gateway.md', import.meta.url), 'utf8');

test('config.PROTOCOL_DEFAULT_PORTS: every usual port of docs/contract.md §1, and no other', (t) => {
  t.truthy(CONTRACT_PORTS, 'docs/contract.md lists the usual ports');
  const contract = Object.fromEntries(
    [...(CONTRACT_PORTS ?? '').matchAll(/([a-z0-9]+)\s+(\d+)/g)].map(([, name, port]) => [name, Number(port)]),
  );
  t.true(Object.keys(contract).length >= 12);
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

test("config.PROTOCOL_DEFAULT_PORTS: the README's protocol table has a row for each, with its port", (t) => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const rows: Record<string, number> = {};
  for (const [, name, port] of readme.matchAll(/^\| `([a-z0-9]+)` \| (\d+) \|/gm)) rows[name] = Number(port);
  t.deepEqual(rows, { ...PROTOCOL_DEFAULT_PORTS });
});

test('config.PROTOCOL_DEFAULT_PORTS: every protocol with a decoder has its usual port there', (t) => {
  const missing = Object.keys(protocols).filter((name) => !Object.hasOwn(PROTOCOL_DEFAULT_PORTS, name));
  t.deepEqual(missing, []);
});
