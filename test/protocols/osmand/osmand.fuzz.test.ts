import test from 'ava';
import { cpuMsSince } from '../../helpers/wait.js';
import { osmandProtocol } from '../../../protocols/osmand/osmand.protocol.js';
import { ProtocolError, type DecodeContext, type HttpRequestLike } from '../../../protocols/types.js';
import { loadVectors } from '../../helpers/vectors.js';
import { prng } from '../../helpers/fuzz.js';

const REAL: HttpRequestLike[] = loadVectors('osmand').flatMap((v) =>
  typeof v.frame === 'string'
    ? []
    : [
        {
          method: v.frame.method,
          url: v.frame.uri,
          headers: Object.fromEntries(Object.entries(v.frame.headers ?? {}).map(([k, x]) => [k.toLowerCase(), x])),
          body: Buffer.from(v.frame.body ?? ''),
        },
      ],
);
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789&=,.-+%:{}[]"_ TZ?/';
const ctx: DecodeContext = { now: new Date(0), transport: 'http', checksum: 'accept', session: {} };

function mutateText(text: string, rand: () => number): string {
  const chars = [...text];
  const edits = 1 + Math.floor(rand() * 6);
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(rand() * (chars.length + 1));
    const kind = rand();
    const c = ALPHABET[Math.floor(rand() * ALPHABET.length)];
    if (kind < 0.4) chars.splice(at, 1);
    else if (kind < 0.8) chars.splice(at, 0, c);
    else chars[at] = c;
  }
  return rand() < 0.2 ? chars.join('').slice(0, Math.floor(rand() * chars.length)) : chars.join('');
}

function checkResult(
  t: import('ava').ExecutionContext,
  status: number,
  messages: { location?: { latitudeDeg: number; longitudeDeg: number; speedKmh?: number; courseDeg?: number } }[],
): void {
  t.true(status === 200 || status === 400);
  if (status === 400) t.is(messages.length, 0);
  for (const m of messages) {
    if (!m.location) continue;
    t.true(Math.abs(m.location.latitudeDeg) <= 90 && Math.abs(m.location.longitudeDeg) <= 180);
    if (m.location.speedKmh !== undefined) t.true(m.location.speedKmh >= 0);
    if (m.location.courseDeg !== undefined) t.true(m.location.courseDeg >= 0 && m.location.courseDeg <= 360);
  }
}

test('osmand.fuzz: mutated requests answer 200 or 400 and never throw', (t) => {
  const rand = prng(5055);
  const started = process.cpuUsage();
  for (let i = 0; i < 10000; i++) {
    const base = REAL[Math.floor(rand() * REAL.length)];
    const request: HttpRequestLike =
      base.body.length && rand() < 0.7
        ? { ...base, body: Buffer.from(mutateText(base.body.toString('utf8'), rand)) }
        : {
            ...base,
            url: mutateText(base.url, rand),
            headers: rand() < 0.2 ? { 'content-type': 'application/json' } : base.headers,
          };
    const result = osmandProtocol.decodeHttp!(request, ctx);
    checkResult(t, result.status, result.messages);
  }
  t.true(cpuMsSince(started) < 20_000, 'finishes in time');
});

test('osmand.fuzz: decode() on random and mutated frames returns or throws ProtocolError', (t) => {
  const rand = prng(808);
  for (let i = 0; i < 10000; i++) {
    const base = REAL[Math.floor(rand() * REAL.length)];
    const text =
      rand() < 0.3
        ? Buffer.from(Array.from({ length: Math.floor(rand() * 300) }, () => Math.floor(rand() * 256)))
        : Buffer.from(mutateText(base.body.length ? base.body.toString('utf8') : base.url, rand));
    try {
      const result = osmandProtocol.decode!(text, ctx);
      checkResult(t, 200, result.messages);
    } catch (error) {
      if (!(error instanceof ProtocolError)) t.fail(`${String(error)} on ${text.toString('hex')}`);
    }
  }
});

test('osmand.fuzz: an oversized body is refused without being parsed', (t) => {
  const body = Buffer.alloc(osmandProtocol.maxFrameBytes + 1, 0x61);
  const result = osmandProtocol.decodeHttp!({ method: 'POST', url: '/', headers: {}, body }, ctx);
  t.is(result.status, 400);
});
