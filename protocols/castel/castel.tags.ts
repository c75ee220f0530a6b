import type { DecodedMessage } from '../types.js';
import {
  TAG_ALARMS,
  TAG_BATTERY,
  TAG_DEVICE_TEMP,
  TAG_FAULTS,
  TAG_FAULTS_COMMERCIAL,
  TAG_PIDS,
  TAG_POWER,
  TAG_TEMP_FIRST,
  TAG_TEMP_LAST,
} from './castel.constants.js';
import { applyScAlarm } from './castel.blocks.js';
import type { ByteReader } from '../shared/byte-reader.js';

/** reads one tag's value (`length` is the tag's own length field) onto the report */
type TagHandler = (r: ByteReader, m: DecodedMessage, length: number) => void;

/** 0x0002: count u8, each PID tag u16, length u16, raw bytes (kept as hex under `pid<tag>`) */
const pids: TagHandler = (r, m) => {
  const count = r.u8();
  for (let i = 0; i < count; i++) {
    const tag = r.u16le();
    m.attributes[`pid${tag}`] = r.bytes(r.u16le(), 'PID value').toString('hex');
  }
};

/** 0x0006 / 0x000B: fault flag u8, count u8, codes u16 (commercial: u32, then MIL status u16) */
function faults(commercial: boolean): TagHandler {
  return (r, m) => {
    r.skip(1);
    const count = r.u8();
    for (let i = 1; i <= count; i++) m.attributes[`fault${i}`] = commercial ? r.u32le() : r.u16le();
    if (commercial) r.skip(2);
  };
}

/** 0x0007: alarm index u32, count u8, each flag u8, number u8, description u16, threshold u16 */
const alarms: TagHandler = (r, m) => {
  r.skip(4);
  const count = r.u8();
  for (let i = 0; i < count; i++) {
    const flag = r.u8();
    const code = r.u8();
    if (flag > 0) applyScAlarm(m, code);
    r.skip(4);
  }
};

const tenths =
  (key: string): TagHandler =>
  (r, m) => {
    m.attributes[key] = r.i16le() / 10;
  };

const volts =
  (key: string): TagHandler =>
  (r, m) => {
    m.attributes[key] = r.u16le() / 100;
  };

const skipValue: TagHandler = (r, _m, length) => r.skip(length);

const TAG_HANDLERS: Readonly<Record<number, TagHandler>> = {
  [TAG_PIDS]: pids,
  [TAG_FAULTS]: faults(false),
  [TAG_ALARMS]: alarms,
  [TAG_FAULTS_COMMERCIAL]: faults(true),
  [TAG_DEVICE_TEMP]: tenths('deviceTemp'),
  [TAG_POWER]: volts('power'),
  [TAG_BATTERY]: volts('battery'),
};
for (let tag = TAG_TEMP_FIRST; tag <= TAG_TEMP_LAST; tag++)
  (TAG_HANDLERS as Record<number, TagHandler>)[tag] = tenths(`temp${tag - TAG_DEVICE_TEMP}`);

/**
 * The tag-length-value data of a 0x401F comprehensive message, up to the CRC: `tag u16 | length u16
 * | value`. Known tags are read by their layout, as Traccar reads them; the others (0x0004 supported
 * data streams, 0x0005 snapshot, unknown ones) are skipped by their length.
 */
export function decodeComprehensiveTags(r: ByteReader, m: DecodedMessage): void {
  while (r.remaining > 0) {
    const tag = r.u16le();
    const length = r.u16le();
    (TAG_HANDLERS[tag] ?? skipValue)(r, m, length);
  }
}
