/** TK103 `(…)` sentences as a tracker sends them, built field by field for tests (docs/protocols.md §3.12). */

export interface Tk103Fix {
  time: Date;
  lat: number;
  lon: number;
  speedKmh?: number;
  course?: number;
}

const pad = (n: number, width: number, digits = 0): string => n.toFixed(digits).padStart(width, '0');

/** `DDMM.MMMM` + hemisphere, `DDDMM.MMMM` for longitudes */
function ddmm(value: number, degWidth: number, pos: string, neg: string): string {
  const abs = Math.abs(value);
  const deg = Math.floor(abs);
  const min = (abs - deg) * 60;
  return `${String(deg).padStart(degWidth, '0')}${pad(min, 7, 4)}${value < 0 ? neg : pos}`;
}

/**
 * `(<id><command><data>YYMMDD A lat lon speed hhmmss course 0 ignition io io io fuel L odometer)`:
 * BR00 a position, BP05 a login (data: the IMEI), BO01 an alarm (data: the alarm digit).
 */
export function tk103Sentence(id: string, command: string, fix: Tk103Fix, data = ''): string {
  const d = fix.time;
  const date = [d.getUTCFullYear() % 100, d.getUTCMonth() + 1, d.getUTCDate()].map((n) => pad(n, 2)).join('');
  const time = [d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()].map((n) => pad(n, 2)).join('');
  return `(${id}${command}${data}${date}A${ddmm(fix.lat, 2, 'N', 'S')}${ddmm(fix.lon, 3, 'E', 'W')}${pad(fix.speedKmh ?? 0, 5, 1)}${time}${pad(fix.course ?? 0, 6, 2)}01000000L0000ABCD)`;
}
