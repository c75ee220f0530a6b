import test from 'ava';
import { protocols } from '../../../protocols/index.js';
import { h02Protocol } from '../../../protocols/h02/h02.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';

const ctx = (): DecodeContext => ({
  now: new Date('2026-03-01T12:00:00Z'),
  transport: 'tcp',
  checksum: 'accept',
  session: {},
});
const V1 = Buffer.from('*HQ,4210051415,V1,100000,A,4024.6080,N,00342.2280,W,35.00,90,010326,FFFFFBFF#');

test('precision: every registered protocol rounds what it decodes: speed to 0.01 km/h, coordinates to 1e-7 degrees', (t) => {
  t.is(
    h02Protocol.decode!(V1, ctx()).messages[0].location!.speedKmh,
    35 * 1.852,
    'the decoder itself converts (64.82000000000001)',
  );
  const l = protocols.h02.decode!(V1, ctx()).messages[0].location!;
  t.is(l.speedKmh, 64.82);
  t.is(l.latitudeDeg, 40.4101333);
  t.is(l.longitudeDeg, -3.7038);
  t.is(l.courseDeg, 90);
  // OsmAnd, flespi, T55 and TLT-2H carry no commands; every other module keeps its encoder through the wrapper
  const withoutCommands = ['osmand', 'flespi', 't55', 'tlt2h'];
  for (const p of Object.values(protocols)) {
    t.is(
      typeof p.encodeCommand === 'function',
      !withoutCommands.includes(p.name),
      `${p.name}: the rest of the module is kept`,
    );
  }
});
