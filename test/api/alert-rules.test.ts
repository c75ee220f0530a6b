import test from 'ava';
import { backends } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { listEnabledRules } from '../../core/rules/alert-rules.repository.js';

const depot = { name: 'Depot', type: 'circle', center: { latitude: 40.4168, longitude: -3.7038 }, radius: 250 };

async function setUp(s: TestServer): Promise<{ zone: string; group: string }> {
  const token = s.adminToken;
  for (const id of ['truck7', 'truck8', 'van1'])
    await s.request('POST', '/api/devices', { token, body: { id, name: id } });
  const zone = (await s.request('POST', '/api/zones', { token, body: depot })).body.zone.id as string;
  const group = (await s.request('POST', '/api/groups', { token, body: { name: 'Vans', devices: ['van1'] } })).body
    .id as string;
  return { zone, group };
}

async function userToken(s: TestServer, email: string, extra: Record<string, unknown>): Promise<string> {
  const r = await s.request('POST', '/api/users', {
    token: s.adminToken,
    body: { name: email, email, country: 'ES', timeZone: 'UTC', ...extra },
  });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  return s.token(email, r.body.apiKey);
}

for (const backend of await backends()) {
  test(`api.alertRules (${backend}): create with defaults, list, get, PUT, JSON Patch and DELETE, in the contract's shape`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const token = s.adminToken;
    const { zone, group } = await setUp(s);

    const speeding = await s.request('POST', '/api/alertRules', {
      token,
      body: {
        name: 'Speeding',
        alertName: 'SpeedLimit',
        devices: ['truck7', 'truck7', 'truck8'],
        params: { speed: 90 },
      },
    });
    t.is(speeding.status, 201, JSON.stringify(speeding.body));
    const id = speeding.body.alertRule.id as string;
    t.deepEqual(
      speeding.body.alertRule,
      {
        id,
        name: 'Speeding',
        alertName: 'SpeedLimit',
        devices: ['truck7', 'truck8'],
        enabled: true,
        params: { speed: 90 },
        minDurationSeconds: 0,
        notify: { email: true, sms: false },
      },
      'defaults filled in, repeats dropped, no group, schedule or command shown',
    );

    const full = {
      name: 'Out of hours at the depot',
      alertName: 'CheckArea',
      group,
      enabled: false,
      params: { zone },
      minDurationSeconds: 120,
      schedule: { days: [6, 7, 6], from: '22:00', to: '06:00' },
      notify: { email: false, sms: true },
      command: { command: 'AA BB', format: 'Hex', delaySeconds: 30 },
    };
    const created = await s.request('POST', '/api/alertRules', { token, body: full });
    t.is(created.status, 201, JSON.stringify(created.body));
    const fullId = created.body.alertRule.id as string;
    t.deepEqual(created.body.alertRule, {
      id: fullId,
      ...full,
      schedule: { days: [6, 7], from: '22:00', to: '06:00' },
    });

    const defaults = await s.request('POST', '/api/alertRules', {
      token,
      body: {
        name: 'Low',
        alertName: 'LowBattery',
        devices: ['van1'],
        schedule: { days: [1] },
        command: { command: 'reboot' },
        notify: { sms: true },
      },
    });
    t.is(defaults.status, 201, JSON.stringify(defaults.body));
    t.like(defaults.body.alertRule, {
      params: { value: 20 },
      schedule: { days: [1], from: '00:00', to: '00:00' },
      command: { command: 'reboot', format: 'Text', delaySeconds: 0 },
      notify: { email: true, sms: true },
    });
    const sensor = await s.request('POST', '/api/alertRules', {
      token,
      body: { name: 'Door', alertName: 'Sensor3On', devices: ['van1'] },
    });
    t.deepEqual(sensor.body.alertRule.params, { attribute: 'in3' });
    const idle = await s.request('POST', '/api/alertRules', {
      token,
      body: { name: 'Idle', alertName: 'IdleTime', group, params: { minutes: 10 } },
    });
    t.deepEqual(idle.body.alertRule.params, { minutes: 10, speed: 3 });
    const expiry = await s.request('POST', '/api/alertRules', {
      token,
      body: { name: 'Expiry', alertName: 'ExpiredDate', group },
    });
    t.deepEqual(expiry.body.alertRule.params, { value: 0 });
    const equals = await s.request('POST', '/api/alertRules', {
      token,
      body: { name: 'Ign', alertName: 'AttributeEquals', group, params: { attribute: 'ignition', value: true } },
    });
    t.deepEqual(equals.body.alertRule.params, { attribute: 'ignition', value: true });

    const list = await s.request('GET', '/api/alertRules', { token });
    t.deepEqual(list.body.alertRules.map((r: { id: string }) => r.id).slice(0, 2), [id, fullId]);
    t.is(list.body.alertRules.length, 7);
    t.deepEqual(
      (await s.request('GET', `/api/alertRules/${fullId}`, { token })).body.alertRule,
      created.body.alertRule,
    );

    const put = await s.request('PUT', `/api/alertRules/${id}`, {
      token,
      body: { name: 'Speeding 100', alertName: 'SpeedLimit', group, params: { speed: 100 } },
    });
    t.is(put.status, 200);
    t.deepEqual(
      put.body.alertRule,
      {
        id,
        name: 'Speeding 100',
        alertName: 'SpeedLimit',
        group,
        enabled: true,
        params: { speed: 100 },
        minDurationSeconds: 0,
        notify: { email: true, sms: false },
      },
      'PUT replaces: the devices left out are gone',
    );

    const patched = await s.request('PATCH', `/api/alertRules/${id}`, {
      token,
      body: [
        { op: 'replace', path: '/params/speed', value: 120 },
        { op: 'add', path: '/devices', value: ['truck8'] },
        { op: 'replace', path: '/enabled', value: false },
        { op: 'add', path: '/schedule', value: { days: [1, 2, 3, 4, 5], from: '08:00', to: '18:00' } },
      ],
    });
    t.is(patched.status, 200, JSON.stringify(patched.body));
    t.like(patched.body.alertRule, {
      params: { speed: 120 },
      devices: ['truck8'],
      group,
      enabled: false,
      schedule: { days: [1, 2, 3, 4, 5], from: '08:00', to: '18:00' },
    });
    const badPatch = await s.request('PATCH', `/api/alertRules/${id}`, {
      token,
      body: [{ op: 'replace', path: '/alertName', value: 'Offline' }],
    });
    t.is(badPatch.status, 400, 'Offline takes no speed and needs minutes');
    t.is(badPatch.body.details.field, 'params.speed');
    const switched = await s.request('PATCH', `/api/alertRules/${id}`, {
      token,
      body: [
        { op: 'replace', path: '/alertName', value: 'Offline' },
        { op: 'replace', path: '/params', value: { minutes: 30 } },
      ],
    });
    t.like(switched.body.alertRule, { alertName: 'Offline', params: { minutes: 30 } });
    t.is(
      (await s.request('PATCH', `/api/alertRules/${id}`, { token, body: [{ op: 'replace', path: '/id', value: 'x' }] }))
        .status,
      400,
      'id is read-only',
    );

    // what the engine reads
    const enabled = await listEnabledRules(s.running.db, s.running.bootstrap!.accountId);
    t.deepEqual(
      enabled.map((r) => r.name),
      ['Low', 'Door', 'Idle', 'Expiry', 'Ign'],
      'the disabled ones are left out, oldest first',
    );
    t.deepEqual(enabled[0].notify, { email: true, sms: true });

    t.is((await s.request('DELETE', `/api/alertRules/${fullId}`, { token })).status, 200);
    const gone = await s.request('GET', `/api/alertRules/${fullId}`, { token });
    t.is(gone.status, 404);
    t.is(gone.body.code, 'RULE_NOT_FOUND');
    t.is(
      (
        await s.request('PUT', '/api/alertRules/nope', {
          token,
          body: { name: 'x', alertName: 'Offline', group, params: { minutes: 1 } },
        })
      ).body.code,
      'RULE_NOT_FOUND',
    );
  });

  test(`api.alertRules (${backend}): every validation error names its field, and nothing is stored`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const token = s.adminToken;
    const { zone, group } = await setUp(s);
    const otherZone = (await s.request('POST', '/api/zones', { token, body: depot })).body.zone.id as string;
    await s.request('DELETE', `/api/zones/${otherZone}`, { token });
    const base = { name: 'R', alertName: 'SpeedLimit', devices: ['truck7'], params: { speed: 90 } };
    const cases: [string, Record<string, unknown>, RegExp?][] = [
      ['name', { ...base, name: '  ' }],
      ['alertName', { ...base, alertName: 'Speeding' }],
      ['params.speed', { ...base, params: {} }, /SpeedLimit needs it/],
      ['params.speed', { ...base, params: { speed: 0 } }, /above 0/],
      ['params.speed', { ...base, params: { speed: '90' } }],
      ['params.minutes', { ...base, params: { speed: 90, minutes: 5 } }, /SpeedLimit takes only speed/],
      ['params.zone', { ...base, alertName: 'ForbiddenArea', params: {} }],
      ['params.zone', { ...base, alertName: 'ForbiddenArea', params: { zone: otherZone } }, /not found/],
      ['params.minutes', { ...base, alertName: 'Offline', params: { minutes: 0 } }],
      ['params.minutes', { ...base, alertName: 'GPSNoSignal', params: {} }],
      ['params.speed', { ...base, alertName: 'NoMovementTime', params: { minutes: 5, speed: -1 } }],
      ['params.value', { ...base, alertName: 'LowBattery', params: { value: 101 } }],
      ['params.value', { ...base, alertName: 'TemperatureGreaterThan', params: {} }],
      ['params.value', { ...base, alertName: 'FuelLessThan', params: { value: 'low' } }],
      ['params.value', { ...base, alertName: 'Mileage', params: { value: 0 } }],
      ['params.attribute', { ...base, alertName: 'AttributeGreaterThan', params: { value: 3 } }],
      ['params.value', { ...base, alertName: 'AttributeLessThan', params: { attribute: 'fuel', value: 'x' } }],
      ['params.attribute', { ...base, alertName: 'Sensor1Off', params: { attribute: 'has space' } }],
      ['params.value', { ...base, alertName: 'ExpiredDate', params: { value: 1.5 } }],
      ['params.value', { ...base, alertName: 'BatteryVoltage', params: {} }],
      ['params.foo', { ...base, alertName: 'Sensor2On', params: { foo: 1 } }, /Sensor2On takes only attribute/],
      ['devices', { ...base, devices: [] }, /devices, a group, or both/],
      ['devices', { ...base, devices: null, group: null }],
      ['devices[1]', { ...base, devices: ['truck7', 'ghost'] }, /"ghost" was not found/],
      ['group', { ...base, devices: undefined, group: 'nope' }, /not found/],
      ['minDurationSeconds', { ...base, minDurationSeconds: 86_401 }],
      ['minDurationSeconds', { ...base, minDurationSeconds: -1 }],
      ['schedule.days', { ...base, schedule: { days: [], from: '08:00', to: '18:00' } }],
      ['schedule.days[1]', { ...base, schedule: { days: [1, 8], from: '08:00', to: '18:00' } }],
      ['schedule.from', { ...base, schedule: { days: [1], from: '8:00', to: '18:00' } }],
      ['schedule.to', { ...base, schedule: { days: [1], from: '08:00', to: '24:00' } }],
      ['notify.email', { ...base, notify: { email: 'yes' } }],
      ['command.command', { ...base, command: { command: '' } }],
      ['command.command', { ...base, command: { command: 'zz', format: 'Hex' } }, /Hex must be pairs/],
      ['command.format', { ...base, command: { command: 'x', format: 'Binary' } }],
      ['command.delaySeconds', { ...base, command: { command: 'x', delaySeconds: 86_401 } }],
    ];
    for (const [field, body, message] of cases) {
      const r = await s.request('POST', '/api/alertRules', { token, body });
      t.is(r.status, 400, `${field}: ${JSON.stringify(body)}`);
      t.is(r.body.code, 'VALIDATION_FAILED');
      t.is(r.body.details?.field, field, `${JSON.stringify(body)} → ${JSON.stringify(r.body)}`);
      if (message) t.regex(r.body.error, message);
    }
    t.deepEqual((await s.request('GET', '/api/alertRules', { token })).body.alertRules, [], 'nothing was stored');
    const ok = await s.request('POST', '/api/alertRules', {
      token,
      body: { ...base, alertName: 'CheckPoint', params: { zone }, group },
    });
    t.is(ok.status, 201, 'the same rule with good references is taken');
  });

  test(`api.alertRules (${backend}): admin of the whole account only; another account's rule, zone, devices and group are not its own`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const { zone, group } = await setUp(s);
    const body = { name: 'Speeding', alertName: 'SpeedLimit', devices: ['truck7'], params: { speed: 90 } };
    const id = (await s.request('POST', '/api/alertRules', { token: s.adminToken, body })).body.alertRule.id as string;

    const writer = await userToken(s, 'writer@example.com', { privileges: ['write', 'execute'] });
    for (const [method, path, b] of [
      ['GET', '/api/alertRules'],
      ['POST', '/api/alertRules', body],
      ['GET', `/api/alertRules/${id}`],
      ['PUT', `/api/alertRules/${id}`, body],
      ['PATCH', `/api/alertRules/${id}`, []],
      ['DELETE', `/api/alertRules/${id}`],
    ] as const) {
      const r = await s.request(method, path, { token: writer, body: b });
      t.is(r.status, 403, `${method} ${path}`);
      t.is(r.body.code, 'FORBIDDEN');
    }
    const groupAdmin = await userToken(s, 'gadmin@example.com', { privileges: ['admin'], group });
    t.is(
      (await s.request('POST', '/api/alertRules', { token: groupAdmin, body: { ...body, devices: ['van1'] } })).status,
      403,
    );

    const b = await s.running.services.accounts.create({
      name: 'B',
      licenses: 5,
      adminUser: 'b-admin',
      adminApiKey: 'b-admin-key-0123456789',
    });
    const other = await s.token('b-admin', 'b-admin-key-0123456789');
    t.deepEqual((await s.request('GET', '/api/alertRules', { token: other })).body.alertRules, []);
    for (const [method, b2] of [
      ['GET'],
      ['PUT', body],
      ['PATCH', [{ op: 'replace', path: '/name', value: 'x' }]],
      ['DELETE'],
    ] as const) {
      const r = await s.request(method, `/api/alertRules/${id}`, { token: other, body: b2 });
      t.is(r.status, 404, method);
      t.is(r.body.code, 'RULE_NOT_FOUND');
    }
    await s.request('POST', '/api/devices', { token: other, body: { id: 'b-truck', name: 'B truck' } });
    const theirs = { name: 'Mine?', alertName: 'ForbiddenArea', devices: ['b-truck'] };
    t.is(
      (await s.request('POST', '/api/alertRules', { token: other, body: { ...theirs, params: { zone } } })).body.details
        .field,
      'params.zone',
      "A's zone is not B's",
    );
    t.is(
      (await s.request('POST', '/api/alertRules', { token: other, body: { ...body, devices: ['truck7'] } })).body
        .details.field,
      'devices[0]',
      "A's device is not B's",
    );
    t.is(
      (await s.request('POST', '/api/alertRules', { token: other, body: { ...body, devices: undefined, group } })).body
        .details.field,
      'group',
      "A's group is not B's",
    );
    t.deepEqual(await listEnabledRules(s.running.db, b.accountId), []);
    t.is(
      (await s.request('GET', `/api/alertRules/${id}`, { token: s.adminToken })).body.alertRule.name,
      'Speeding',
      'unchanged',
    );
  });

  test(`api.alertRules (${backend}): a deleted device leaves the rules' device lists; a group a rule watches cannot be deleted`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const token = s.adminToken;
    const { group } = await setUp(s);
    const both = (
      await s.request('POST', '/api/alertRules', {
        token,
        body: { name: 'Both', alertName: 'Offline', devices: ['truck7', 'truck8'], params: { minutes: 5 } },
      })
    ).body.alertRule.id as string;
    const only = (
      await s.request('POST', '/api/alertRules', {
        token,
        body: { name: 'Only', alertName: 'Offline', devices: ['truck7'], params: { minutes: 5 } },
      })
    ).body.alertRule.id as string;
    const byGroup = (
      await s.request('POST', '/api/alertRules', {
        token,
        body: { name: 'Vans', alertName: 'Offline', group, params: { minutes: 5 } },
      })
    ).body.alertRule.id as string;

    t.is((await s.request('DELETE', '/api/devices/truck7', { token })).status, 200);
    t.deepEqual((await s.request('GET', `/api/alertRules/${both}`, { token })).body.alertRule.devices, ['truck8']);
    const left = (await s.request('GET', `/api/alertRules/${only}`, { token })).body.alertRule;
    t.false('devices' in left, 'a rule left with no devices and no group watches nothing');
    const { id: _id, ...asShown } = left;
    const put = await s.request('PUT', `/api/alertRules/${only}`, { token, body: asShown });
    t.is(put.body.details.field, 'devices', 'saving it again asks for devices or a group');

    const refused = await s.request('DELETE', `/api/groups/${group}`, { token });
    t.is(refused.status, 409);
    t.is(refused.body.code, 'GROUP_IN_USE');
    t.deepEqual(refused.body.details.rules, ['Vans']);
    t.is((await s.request('GET', `/api/groups/${group}`, { token })).status, 200);
    await s.request('DELETE', `/api/alertRules/${byGroup}`, { token });
    t.is((await s.request('DELETE', `/api/groups/${group}`, { token })).status, 200);
  });
}
