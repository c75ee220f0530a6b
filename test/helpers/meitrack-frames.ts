/** Meitrack frames as a tracker sends them, built field by field for tests (docs/protocols.md §3.7). */

export interface MeitrackFix {
  time: Date;
  lat: number;
  lon: number;
  speedKmh?: number;
  course?: number;
}

/** the byte sum from `$$` through `*`, two uppercase hex digits (Meitrack GPRS protocol 1.1) */
export function sum8(bytes: Buffer): string {
  let s = 0;
  for (const b of bytes) s = (s + b) & 0xff;
  return s.toString(16).toUpperCase().padStart(2, '0');
}

/** `$$<flag><len>,<imei>,<content>*XX\r\n`; content may be binary */
export function meitrackFrame(flag: string, imei: string, content: Buffer | string, marker = '$$'): Buffer {
  const body = typeof content === 'string' ? Buffer.from(content, 'latin1') : content;
  const length = 1 + imei.length + 1 + body.length + 1 + 2 + 2;
  const head = Buffer.concat([Buffer.from(`${marker}${flag}${length},${imei},`, 'latin1'), body, Buffer.from('*')]);
  return Buffer.concat([head, Buffer.from(`${sum8(head)}\r\n`, 'latin1')]);
}

const two = (n: number): string => String(n).padStart(2, '0');
const stamp = (d: Date): string =>
  [d.getUTCFullYear() % 100, d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()]
    .map(two)
    .join('');

/** An AAA report (event 35 is the periodic one, 1 SOS, 23 power cut) with hex battery and power analogs */
export function meitrackAaa(imei: string, fix: MeitrackFix, event = 35, flag = 'A'): Buffer {
  const fields = [
    'AAA',
    event,
    fix.lat.toFixed(6),
    fix.lon.toFixed(6),
    stamp(fix.time),
    'A',
    9,
    20,
    fix.speedKmh ?? 0,
    fix.course ?? 0,
    '0.9',
    120,
    15000,
    3600,
    '214|7|2BC0|250B',
    '0001',
    '0000|0000|0000|0191|0573',
    '',
    '',
    '3',
    '0000',
  ];
  return meitrackFrame(flag, imei, fields.join(','));
}

/** A CCC batch: u16 version, u16 packet length, u32 remaining, then 52-byte little-endian packets */
export function meitrackCcc(imei: string, fixes: MeitrackFix[], flag = 'U', event = 35): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt16LE(1, 0);
  head.writeUInt16LE(52, 2);
  head.writeUInt32LE(fixes.length, 4);
  const packets = fixes.map((f) => {
    const p = Buffer.alloc(52);
    let o = 0;
    p.writeUInt8(event, o++);
    p.writeInt32LE(Math.round(f.lat * 1e6), o);
    o += 4;
    p.writeInt32LE(Math.round(f.lon * 1e6), o);
    o += 4;
    p.writeUInt32LE(f.time.getTime() / 1000 - 946_684_800, o);
    o += 4;
    p.writeUInt8(1, o++); // valid
    p.writeUInt8(8, o++); // satellites
    p.writeUInt8(20, o++); // gsm
    p.writeUInt16LE(f.speedKmh ?? 0, o);
    o += 2;
    p.writeUInt16LE(f.course ?? 0, o);
    o += 2;
    p.writeUInt16LE(9, o);
    o += 2; // hdop x10
    p.writeUInt16LE(120, o);
    o += 2; // altitude
    p.writeUInt32LE(15000, o);
    o += 4; // odometer
    p.writeUInt32LE(3600, o);
    o += 4; // runtime
    for (const v of [214, 7, 0x2bc0, 0x250b, 0, 0, 412, 1395]) {
      p.writeUInt16LE(v, o);
      o += 2;
    } // cell, status, adc1, battery, power
    return p;
  });
  return meitrackFrame(flag, imei, Buffer.concat([Buffer.from('CCC,'), head, ...packets]));
}
