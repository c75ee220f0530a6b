import test from 'ava';
import { gl200Protocol } from '../../../protocols/gl200/gl200.protocol.js';
import { ProtocolError, type DecodeContext, type DecodeResult } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date();

runVectors(gl200Protocol, { now: NOW });
