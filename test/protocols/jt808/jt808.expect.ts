import type { ExecutionContext } from 'ava';
import type { DecodeResult, DecodedMessage } from '../../../protocols/types.js';
import { type Vector, vectorTime, vectorValue } from '../../helpers/vectors.js';

function checkPosition(t: ExecutionContext, m: DecodedMessage | undefined, e: Record<string, unknown>, where: string): void {
  t.truthy(m?.location, `${where}: a message with a location`);
  if (!m?.location) return;
  if (typeof e.time === 'string') t.is(m.fixTime && vectorTime(m.fixTime), e.time, `${where}: time`);
  if (typeof e.valid === 'boolean') t.is(m.location.valid, e.valid, `${where}: valid`);
  if (typeof e.lat === 'number') t.true(Math.abs(m.location.latitudeDeg - e.lat) < 1e-5, `${where}: lat ${m.location.latitudeDeg}`);
  if (typeof e.lon === 'number') t.true(Math.abs(m.location.longitudeDeg - e.lon) < 1e-5, `${where}: lon ${m.location.longitudeDeg}`);
}

/** asserts what `v.expect` says about `result` (PROTOCOLS.md §4), and the derived ack when there is one */
export function checkVector(t: ExecutionContext, v: Vector, result: DecodeResult): void {
  const e = v.expect;
  const where = `line ${v.line}`;
  const first = result.messages[0];
  switch (e.assert) {
    case 'null':
      t.is(result.messages.length, 0, `${where}: no message`);
      break;
    case 'notNull':
      t.true(result.messages.length > 0 || result.identity !== undefined, `${where}: something decoded`);
      break;
    case 'position':
      checkPosition(t, first, e, where);
      break;
    case 'positions':
      t.true(result.messages.length > 0, `${where}: messages`);
      if (e.checkLocation !== false) result.messages.forEach((m, i) => checkPosition(t, m, e, `${where} #${i}`));
      break;
    case 'attributes':
      t.true(result.messages.some((m) => Object.keys(m.attributes).length > 0), `${where}: attributes`);
      break;
    case 'attribute': {
      t.truthy(first, `${where}: a message`);
      if (!first) break;
      const actual = vectorValue(first, String(e.key));
      if (typeof e.value === 'number' && typeof actual === 'number') {
        t.true(Math.abs(actual - e.value) < 1e-3 * Math.max(1, Math.abs(e.value)), `${where}: ${String(e.key)} ${actual} ~ ${e.value}`);
      } else {
        t.deepEqual(actual, e.value, `${where}: ${String(e.key)}`);
      }
      break;
    }
    default:
      t.fail(`${where}: unknown assert ${e.assert}`);
  }
  if (v.ack?.encoding === 'hex') t.is(result.replies[0]?.toString('hex'), v.ack.data.toLowerCase(), `${where}: ack`);
}
