import test from 'ava';
import { meitrackProtocol } from '../../../protocols/meitrack/meitrack.protocol.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date();
runVectors(meitrackProtocol, { now: NOW, everyFrameNamesItsDevice: true });
