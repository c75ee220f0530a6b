/**
 * A device record's decoder settings (*ext* `protocolOptions`) reach the decoder through real
 * sockets: an ATrack AX7 set to a custom report form has its form's fields stored; once the
 * settings are removed over REST, its next report is read with the standard form.
 */
import test from 'ava';
import {
  createDevice,
  startTestServer,
  testInGatewayModes,
  type GatewayMode,
  type Teardown,
  type TestServer,
} from '../helpers/server.js';
import { TrackerClient } from '../helpers/tracker-client.js';
import { until } from '../helpers/wait.js';

const ID = '357766091026083';
const FORM = '%AT%BV%MV%SA%VN%PD%IA%MP%EL%ET%FC%FL%RP%ML%MF%TR%EH%DL%EG%HA%HB%HC%IP%MT';
/** a captured AX7 text report in the custom form above; `t` moves its three times by `t` seconds */
const report = (t: number): Buffer => {
  const [gps, rtc, pos] = [1558908265, 1558908266, 1558908266].map((x) => x + t);
  return Buffer.from(
    `@P,7E02,186,0,${ID},${gps},${rtc},${pos},-121900220,37407524,175,2,6,6,1,39,0,0,,2000,2000, ,3,40,142,12,JN8AZ1MU1BW066090,0,30,0,58,90,22,72,1187,0,1232,9,409,0,1,0,0,0,0,1\r\n`,
    'latin1',
  );
};
const ACK = Buffer.from('fe0200000000000000ba0000', 'hex');
const RANGE = { from: '2019-05-26T00:00:00Z', to: '2019-05-28T00:00:00Z' };

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  const s = await startTestServer(t, { env: { TRACKGATE_ATRACK_PORT: '0', ...mode.env } });
  await createDevice(s, ID, { name: 'AX7', protocolOptions: { custom: true, form: FORM } });
  return s;
}

const locations = async (s: TestServer): Promise<{ dateTime: string; attributes: Record<string, unknown> }[]> =>
  (await s.request('POST', `/api/devices/${ID}/locations`, { token: s.adminToken, body: RANGE })).body.locations;

testInGatewayModes(
  test,
  "gateway.atrack: a device's protocolOptions decode its custom form; removed over REST, the next report is read without it",
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await TrackerClient.connect(s.running.ports.atrack);
    t.teardown(() => c.end());
    c.write(report(0));
    t.deepEqual(await c.read(ACK.length), ACK, 'acknowledged once stored');
    const [first] = await locations(s);
    t.like(first.attributes, { vin: 'JN8AZ1MU1BW066090', rpm: 1187, fuel: 72 });

    const patched = await s.request('PATCH', `/api/devices/${ID}`, {
      token: s.adminToken,
      body: [
        { op: 'remove', path: '/protocolOptions/form' },
        { op: 'replace', path: '/protocolOptions/custom', value: 'false' },
      ],
    });
    t.is(patched.status, 200);
    // the change reaches the gateway's cached record (a gateway process: over its link) before the next report
    await until('the next report read without the custom form', async () => {
      c.write(report(60));
      await c.read(ACK.length);
      const second = (await locations(s)).find((l) => l.dateTime === '2019-05-26T22:05:25.000Z');
      return second !== undefined && second.attributes.vin === undefined;
    });
    const second = (await locations(s)).find((l) => l.dateTime === '2019-05-26T22:05:25.000Z')!;
    t.is(second.attributes.rpm, undefined, 'the standard form has no OBD fields');
    t.is(second.attributes.temp1, 2000);
  },
);
