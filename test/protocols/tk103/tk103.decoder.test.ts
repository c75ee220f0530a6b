import test from 'ava';
import { tk103Protocol } from '../../../protocols/tk103/tk103.protocol.js';
import { ProtocolError, type DecodeContext, type DecodeResult } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date();
runVectors(tk103Protocol, { now: NOW, everyFrameNamesItsDevice: true });
