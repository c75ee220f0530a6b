import test from 'ava';
import { flespiProtocol } from '../../../protocols/flespi/flespi.protocol.js';
import { ProtocolError, type DecodeContext, type HttpDecodeResult } from '../../../protocols/types.js';
import { prng } from '../../helpers/fuzz.js';
import { loadVectors } from '../../helpers/vectors.js';
import { cpuMsSince } from '../../helpers/wait.js';

const BODIES: string[] = loadVectors('flespi').flatMap((v) =>
  typeof v.frame === 'string' ? [] : [v.frame.body ?? ''],
);
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789.,:#-+eE{}[]"_ ';
const ctx: DecodeContext = { now: new Date(0), transport: 'http', checksum: 'accept', session: {} };
const post = (body: string): HttpDecodeResult =>
  flespiProtocol.decodeHttp!({ method: 'POST', url: '/', headers: {}, body: Buffer.from(body) }, ctx);

function mutateText(text: string, rand: () => number): string {
  const chars = [...text];
  for (let i = 1 + Math.floor(rand() * 6); i > 0; i--) {
    const at = Math.floor(rand() * (chars.length + 1));
    const kind = rand();
    const c = ALPHABET[Math.floor(rand() * ALPHABET.length)];
    if (kind < 0.4) chars.splice(at, 1);
    else if (kind < 0.8) chars.splice(at, 0, c);
    else chars[at] = c;
  }
  return chars.join('');
}

/** a message of random values under the names the decoder knows, and some it does not */
function randomMessage(rand: () => number, names: string[]): Record<string, unknown> {
  const values = [true, false, null, 0, -1, 1e308, -95.5, 400, 'text', '2026-01-02T03:04:05', [], { a: 1 }, 1.5];
  const m: Record<string, unknown> = rand() < 0.9 ? { ident: rand() < 0.9 ? `dev${Math.floor(rand() * 3)}` : 5 } : {};
  for (let i = Math.floor(rand() * 12); i > 0; i--)
    m[names[Math.floor(rand() * names.length)]] = values[Math.floor(rand() * values.length)];
  return m;
}

function checkResult(t: import('ava').ExecutionContext, r: HttpDecodeResult): void {
  t.true(r.status === 200 || r.status === 400);
  if (r.status === 400) t.is(r.messages.length, 0);
  t.is(
    r.messages.length,
    (r.devices ?? []).reduce((n, g) => n + g.messages.length, 0),
  );
  for (const m of r.messages) {
    if (m.fixTime) t.false(Number.isNaN(m.fixTime.getTime()));
    if (!m.location) continue;
    t.true(Math.abs(m.location.latitudeDeg) <= 90 && Math.abs(m.location.longitudeDeg) <= 180);
    if (m.location.speedKmh !== undefined) t.true(m.location.speedKmh >= 0);
    if (m.location.courseDeg !== undefined) t.true(m.location.courseDeg >= 0 && m.location.courseDeg <= 360);
    for (const v of Object.values(m.attributes)) t.true(['string', 'number', 'boolean'].includes(typeof v));
  }
}

test('flespi.fuzz: mutated vector bodies answer 200 or 400 and never throw', (t) => {
  const rand = prng(5149);
  const started = process.cpuUsage();
  for (let i = 0; i < 5000; i++) checkResult(t, post(mutateText(BODIES[Math.floor(rand() * BODIES.length)], rand)));
  t.true(cpuMsSince(started) < 20_000, 'finishes in time');
});

test('flespi.fuzz: random values under every parameter name give sane messages', (t) => {
  const rand = prng(0xf1e5);
  const names = [
    'timestamp',
    'position.latitude',
    'position.longitude',
    'position.speed',
    'position.direction',
    'position.altitude',
    'position.satellites',
    'position.valid',
    'battery.level',
    'can.engine.temperature#3',
    'can.engine.temperature#x',
    'ibutton.code',
    'alarm.event.trigger',
    '__proto__',
    'custom.x#1',
  ];
  for (let i = 0; i < 5000; i++)
    checkResult(
      t,
      post(JSON.stringify(Array.from({ length: Math.floor(rand() * 4) }, () => randomMessage(rand, names)))),
    );
});

test('flespi.fuzz: decode() on random and mutated frames returns or throws ProtocolError', (t) => {
  const rand = prng(808);
  for (let i = 0; i < 3000; i++) {
    const frame =
      rand() < 0.3
        ? Buffer.from(Array.from({ length: Math.floor(rand() * 300) }, () => Math.floor(rand() * 256)))
        : Buffer.from(mutateText(BODIES[Math.floor(rand() * BODIES.length)], rand));
    try {
      flespiProtocol.decode!(frame, ctx);
    } catch (error) {
      if (!(error instanceof ProtocolError)) t.fail(`${String(error)} on ${frame.toString('hex')}`);
    }
  }
  t.pass();
});
