import test from 'ava';
import { backends } from '../../helpers/backends.js';
import { startServer } from '../../helpers/server.js';
import * as store from '../../../core/rules/rule-state.repository.js';

const state = (on: boolean) => ({ on, since: on ? 1000 : null, fired: false, memory: { text: 'x' } });

for (const backend of await backends()) {
  test(`rule-state (${backend}): states are inserted once and written compare-and-set in batches; a stale version is not written`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const db = s.running.db;
    const rows = Array.from({ length: 250 }, (_, i) => ({
      ruleId: 'r1',
      deviceId: `d${i}`,
      state: state(true),
      version: 0,
      commandDue: null,
    }));
    const inserted = await store.insertStates(db, rows, 1);
    t.is(inserted.size, 250);
    t.is((await store.insertStates(db, rows.slice(0, 3), 2)).size, 0, 'a second insert of the same keys takes none');
    const next = rows.map((r, i) => ({
      ...r,
      state: state(false),
      version: i === 7 ? 5 : 1,
      commandDue: i === 0 ? 99 : null,
    }));
    const written = await store.updateStates(db, next, 3);
    t.is(written.size, 249);
    t.false(written.has('r1|d7'), 'the stale version is not written');
    const d0 = await store.stateOf(db, 'r1', 'd0');
    t.like(d0, { version: 2, commandDue: 99 });
    t.deepEqual(d0!.state, state(false));
    t.is((await store.stateOf(db, 'r1', 'd7'))!.version, 1);
    t.deepEqual(
      (await store.pendingOf(db, ['r1'])).map((x) => x.deviceId),
      ['d7'],
      'pending: on and not fired',
    );
    t.deepEqual(
      (await store.commandsDue(db, 100)).map((x) => x.deviceId),
      ['d0'],
    );
  });
}
