import test from 'ava';
import { cpuMsSince } from '../../helpers/wait.js';
import { gl200Protocol } from '../../../protocols/gl200/gl200.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { fuzzSplitter, onlyProtocolErrors, prng } from '../../helpers/fuzz.js';

const real = loadVectors('gl200')
  .filter((v) => v.test_kind === 'decoder')
  .map(frameBytes);
const ALPHABET = Buffer.from('0123456789ABCDEFabcdef,.:+-$RESPBUFFACKGT \0\r\n');

function mutate(rand: () => number, src: Buffer): Buffer {
  const b = Buffer.from(src);
  const int = (n: number): number => Math.floor(rand() * n);
  switch (int(7)) {
    case 0: // bit flips
      for (let i = 0, n = 1 + int(8); i < n && b.length; i++) b[int(b.length)] ^= 1 << int(8);
      return b;
    case 1: // truncation
      return b.subarray(0, int(b.length + 1));
    case 2: // protocol characters swapped in
      for (let i = 0, n = 1 + int(6); i < n && b.length; i++) b[int(b.length)] = ALPHABET[int(ALPHABET.length)];
      return b;
    case 3: // a real frame spliced into another
      return Buffer.concat([b.subarray(0, int(b.length)), real[int(real.length)]]);
    case 4: {
      // a field dropped or doubled
      const fields = b.toString('latin1').split(',');
      const at = int(fields.length);
      if (int(2)) fields.splice(at, 1);
      else fields.splice(at, 0, fields[at] ?? '');
      return Buffer.from(fields.join(','), 'latin1');
    }
    case 5: // random protocol characters
      return Buffer.from(Array.from({ length: int(300) }, () => ALPHABET[int(ALPHABET.length)]));
    default: // random bytes
      return Buffer.from(Array.from({ length: int(300) }, () => int(256)));
  }
}

const ctx: DecodeContext = { now: new Date(Date.UTC(2024, 0, 1)), transport: 'tcp', checksum: 'accept', session: {} };

test('gl200.fuzz: the decoder throws nothing but ProtocolError on mutated and random frames', (t) => {
  const rand = prng(0x200);
  const started = process.cpuUsage();
  for (let i = 0; i < 10000; i++) {
    const input = mutate(rand, real[i % real.length]);
    const problem = onlyProtocolErrors(() => gl200Protocol.decode!(input, ctx));
    if (problem) return t.fail(`input ${JSON.stringify(input.toString('latin1'))}: ${problem}`);
  }
  t.true(cpuMsSince(started) < 30_000, 'finishes quickly');
});

test('gl200.fuzz: hostile reports with many fields do not backtrack for long', (t) => {
  const hostile = [
    '+RESP:GTFRI,020102,135790246811220,,' + '1,'.repeat(2000) + 'x',
    '+RESP:GTFRI,020102,135790246811220,,0,0,1,' + '1,0.0,0,1.0,1.000000,1.000000,,,,,,'.repeat(150) + ',x',
    '+RESP:GTBAA,020102,135790246811220,,1,1,1,1,003F,' + 'a,'.repeat(1500) + 'x',
    '+RESP:GTGSM,020102,135790246811220,STR,' + ','.repeat(3000) + 'x',
    '+RESP:GTDAR,020102,135790246811220,,1,1,,,' + ',,,,,,,,,,,,'.repeat(200) + 'x',
  ];
  for (const h of hostile) {
    const started = process.cpuUsage();
    onlyProtocolErrors(() => gl200Protocol.decode!(Buffer.from(h), ctx));
    t.true(cpuMsSince(started) < 2_000, h.slice(0, 40));
  }
});

test('gl200.fuzz: the splitter stays bounded and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(13);
  const started = process.cpuUsage();
  fuzzSplitter(t, {
    protocol: gl200Protocol,
    rand,
    rounds: 4000,
    input: (i) => {
      const m = mutate(rand, real[i % real.length]);
      return m[0] === 0x2b && m.includes(0x2c) ? Buffer.concat([m, Buffer.from('$')]) : m;
    },
    decode: (f) => gl200Protocol.decode!(f, ctx),
    show: (f) => JSON.stringify(f.toString('latin1')),
  });
  t.true(cpuMsSince(started) < 30_000, 'finishes quickly');
});
