import type { DecodedMessage } from '../../protocols/types.js';
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** One line of test/vectors/<protocol>.jsonl (see test/vectors/README.md). */
export interface Vector {
  protocol: string;
  transport: 'tcp' | 'udp' | 'http';
  encoding: 'hex' | 'text' | 'http';
  frame: string | { method: string; uri: string; headers?: Record<string, string>; body?: string };
  frame_out?: string | string[];
  kind: string;
  expect: Record<string, unknown> & { assert: string };
  test_kind: 'decoder' | 'frame_decoder' | 'encoder';
  test_ctor?: string;
  setup?: string | string[];
  /** Traccar configuration keys the test's decoder was built with (`{"xexun.extended": true}`) */
  config?: Record<string, string | number | boolean>;
  msg_type?: string;
  ack?: { encoding: string; data: string };
  crc_ok?: boolean;
  checksum_ok?: boolean;
  /** e.g. `stateful: frame #2 decoded from the same input buffer` (a frame-decoder vector's later frame) */
  note?: string;
  /** the frame's place among the frames one decoder instance was fed in its test method (0-based) */
  seq?: number;
  /** earlier frames the same session must decode first, in `seq` order (an identifying login, a FLEX negotiation) */
  requires_prior?: PriorFrame[];
  line: number;
}

/** A frame a vector's session decodes before it (`requires_prior`). */
export interface PriorFrame {
  seq: number;
  encoding: 'hex' | 'text';
  frame: string;
  transport?: 'tcp' | 'udp';
  why?: string;
}

const here = path.dirname(fileURLToPath(import.meta.url));

/** The folder holding the captured frames: `TRACKGATE_VECTORS_DIR`, else test/vectors in this repository. */
export function vectorsDir(): string {
  const fromEnv = process.env.TRACKGATE_VECTORS_DIR;
  if (fromEnv) return fromEnv;
  return path.resolve(here, '../vectors');
}

export function loadVectors(protocol: string): Vector[] {
  const file = path.join(vectorsDir(), `${protocol}.jsonl`);
  if (!existsSync(file)) throw new Error(`vectors for ${protocol} not found at ${file} (set TRACKGATE_VECTORS_DIR)`);
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l, i) => ({ ...(JSON.parse(l) as Omit<Vector, 'line'>), line: i + 1 }));
}

/** The bytes of a frame as the vector stores them (a prior frame's too). */
export function frameBytes(v: Pick<Vector, 'frame' | 'encoding'>): Buffer {
  if (typeof v.frame !== 'string') throw new Error('http vector has no byte frame');
  return v.encoding === 'hex' ? Buffer.from(v.frame, 'hex') : Buffer.from(v.frame, 'latin1');
}

/** A time as the vectors write it: UTC `yyyy-MM-dd HH:mm:ss.SSS`. */
export const vectorTime = (d: Date): string => d.toISOString().replace('T', ' ').slice(0, 23);

/** The `network` attribute (JSON text, Traccar's Network model names) in the vectors' short form `{cellTowers: [{mcc, mnc, lac, cid}]}`. */
function shortNetwork(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const n = JSON.parse(value) as { cellTowers?: Record<string, number>[] };
  return {
    cellTowers: (n.cellTowers ?? []).map((c) => ({
      mcc: c.mobileCountryCode,
      mnc: c.mobileNetworkCode,
      lac: c.locationAreaCode,
      cid: c.cellId,
    })),
  };
}

/**
 * What a vector's `attribute` key names on a decoded message: `speed` (in knots, as Traccar keeps
 * it), `course` and `altitude` are location fields, `alarm` is the comma-joined alarm list (or an
 * `alarm` attribute, which OsmAnd passes through), `network` the cell towers in the vectors' short
 * names, anything else an attribute.
 */
export function vectorValue(m: DecodedMessage, key: string): unknown {
  switch (key) {
    case 'speed':
      return m.location?.speedKmh === undefined ? undefined : m.location.speedKmh / 1.852;
    case 'course':
      return m.location?.courseDeg;
    case 'altitude':
      return m.location?.altitudeM;
    case 'alarm':
      return m.alarms.length ? m.alarms.join(',') : m.attributes.alarm;
    case 'network':
      return shortNetwork(m.attributes.network);
    default:
      return m.attributes[key];
  }
}
