import test from 'ava';
import { totemProtocol } from '../../../protocols/totem/totem.protocol.js';
import { type DecodeContext } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const decode = totemProtocol.decode!;
const ctx = (checksum: 'accept' | 'strict' = 'accept'): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum,
  session: {},
});
const text = (s: string): Buffer => Buffer.from(s, 'latin1');

runVectors(totemProtocol, { now: NOW, everyFrameNamesItsDevice: true });
