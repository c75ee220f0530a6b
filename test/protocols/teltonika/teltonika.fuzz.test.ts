import test from 'ava';
import { cpuMsSince } from '../../helpers/wait.js';
import { teltonikaProtocol } from '../../../protocols/teltonika/teltonika.protocol.js';
import type { DecodeContext } from '../../../protocols/types.js';
import { loadVectors, frameBytes } from '../../helpers/vectors.js';
import { fuzzSplitter, onlyProtocolErrors, prng } from '../../helpers/fuzz.js';

const real = loadVectors('teltonika')
  .filter((v) => v.test_kind === 'decoder')
  .map((v) => ({ transport: v.transport, frame: frameBytes(v) }));
const tcp = real.filter((r) => r.transport === 'tcp').map((r) => r.frame);
const udp = real.filter((r) => r.transport === 'udp').map((r) => r.frame);

function mutate(rand: () => number, src: Buffer): Buffer {
  const b = Buffer.from(src);
  const int = (n: number): number => Math.floor(rand() * n);
  switch (int(5)) {
    case 0: // bit flips
      for (let i = 0, n = 1 + int(8); i < n && b.length; i++) b[int(b.length)] ^= 1 << int(8);
      return b;
    case 1: // truncation
      return b.subarray(0, int(b.length + 1));
    case 2: // insertion of random bytes
      return Buffer.concat([
        b.subarray(0, int(b.length)),
        Buffer.from(Array.from({ length: 1 + int(16) }, () => int(256))),
        b,
      ]);
    case 3: // a real frame spliced into another
      return Buffer.concat([b.subarray(0, int(b.length)), tcp[int(tcp.length)]]);
    default: // random bytes
      return Buffer.from(Array.from({ length: int(300) }, () => int(256)));
  }
}

const ctx = (transport: 'tcp' | 'udp', model?: string): DecodeContext => ({
  now: new Date(Date.UTC(2024, 0, 1)),
  transport,
  checksum: 'accept',
  session: {},
  ...(model && { model }),
});

test('teltonika.fuzz: the decoder throws nothing but ProtocolError on mutated and random frames', (t) => {
  const rand = prng(0x5eed);
  const started = process.cpuUsage();
  for (let i = 0; i < 6000; i++) {
    const useUdp = udp.length > 0 && i % 5 === 0;
    const input = mutate(rand, useUdp ? udp[i % udp.length] : tcp[i % tcp.length]);
    const model = i % 2 ? 'FMB130' : i % 3 ? 'FMB640' : undefined;
    const problem = onlyProtocolErrors(() =>
      useUdp
        ? teltonikaProtocol.decodeDatagram!(input, ctx('udp', model))
        : teltonikaProtocol.decode!(input, ctx('tcp', model)),
    );
    if (problem) return t.fail(`input ${input.toString('hex')}: ${problem}`);
  }
  t.true(cpuMsSince(started) < 20_000, 'finishes quickly');
});

test('teltonika.fuzz: the splitter stays bounded and its frames decode or throw ProtocolError', (t) => {
  const rand = prng(42);
  const started = process.cpuUsage();
  fuzzSplitter(t, {
    protocol: teltonikaProtocol,
    rand,
    rounds: 3000,
    input: (i) => mutate(rand, tcp[i % tcp.length]),
    decode: (f) => teltonikaProtocol.decode!(f, ctx('tcp')),
    show: (f) => f.toString('hex'),
  });
  t.true(cpuMsSince(started) < 30_000, 'finishes quickly');
});
