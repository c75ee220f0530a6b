import test from 'ava';
import { backends } from '../../helpers/backends.js';
import { startServer } from '../../helpers/server.js';
import type { ChangedCommand } from '../../../core/events/event-bus.js';
import { until } from '../../helpers/wait.js';

for (const backend of await backends()) {
  test(`commands.service (${backend}): every status change is told, in order, with the command as that change left it, however fast the next one follows`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    t.is(
      (await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: 'd1', name: 'd1' } })).status,
      201,
    );
    const told: ChangedCommand[] = [];
    const off = s.running.services.events.onCommandChanged((c) => told.push(c));
    t.teardown(off);
    const commands = s.running.services.commands;
    const ids: number[] = [];
    for (let i = 0; i < 20; i++)
      ids.push(
        (
          await s.request('POST', '/api/devices/d1/sendCommand', {
            token: s.adminToken,
            body: { command: `probe ${i}` },
          })
        ).body.command.id,
      );
    // many devices answering the moment their command is written, all at once
    await Promise.all(
      ids.map(async (id, i) => {
        t.true(await commands.markSent(id, {}));
        await commands.answered(id, `answer ${i}`);
      }),
    );
    await until('every change told', () => told.filter((c) => c.command.status === 'answered').length >= 20);
    const perCommand = new Map<number, string[]>();
    for (const c of told) perCommand.set(c.command.id, [...(perCommand.get(c.command.id) ?? []), c.command.status]);
    for (const [id, statuses] of perCommand) t.deepEqual(statuses, ['queued', 'sent', 'answered'], `command ${id}`);
    t.is(perCommand.size, 20);
    const sent = told.find((c) => c.command.status === 'sent')!;
    t.like(sent.command, { answered: null, result: null, attempts: 1 }, 'the command as the change to sent left it');
    t.truthy(sent.command.sent);
  });
}

for (const backend of await backends()) {
  test(`commands.service (${backend}): a tracker logging in with no command waiting costs one indexed read and no write`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    t.is(
      (await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: 'd1', name: 'd1' } })).status,
      201,
    );
    const commands = s.running.services.commands;
    // the partitions' maintenance at start (PostgreSQL) runs its own statements: done before counting
    await s.running.partitions.run();
    const statements: string[] = [];
    const count = (q: { sql: string }) => statements.push(q.sql);
    s.running.db.on('query', count);
    await commands.recover('d1');
    t.is(await commands.next('d1'), undefined);
    s.running.db.off('query', count);
    // on SQLite the read goes through the read-only connection (not seen here); on PostgreSQL through the pool
    t.deepEqual(
      statements.filter((sql) => !/^select 1 as x from commands where device_id = /.test(sql)),
      [],
    );

    // with a command queued, the same calls find it
    const id = (
      await s.request('POST', '/api/devices/d1/sendCommand', { token: s.adminToken, body: { command: 'getinfo' } })
    ).body.command.id;
    await commands.recover('d1');
    t.is((await commands.next('d1'))?.id, id);
  });
}
