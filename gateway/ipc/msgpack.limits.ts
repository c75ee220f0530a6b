/**
 * What a MessagePack message of the gateway link may hold, checked on its bytes before msgpackr
 * decodes it (link-guard.ts). msgpackr allocates each array and map at the length its header
 * announces and decodes every value it holds: 64 KB of deflate that inflated to a 66-million
 * element array took over 1 GB of the core's heap. The walk is iterative and allocates nothing
 * per value; it takes only the types a gateway sends (ipc.messages.ts): nil, booleans, numbers,
 * strings, binary, arrays, maps, and msgpackr's two extensions for `undefined` (type 0) and Dates
 * (the timestamp, type -1). msgpackr's other extensions (records, bundled strings, structured
 * clones, Sets, Errors, RegExps, typed arrays, big integers) are refused: no gateway sends them,
 * and some read values from outside their own bytes.
 */

export interface MsgpackLimits {
  /** values in the message at most, every array element, map key and map value counted */
  elements: number;
  /** arrays and maps nested at most this deep (the message itself is level 1) */
  depth: number;
}

/** the timestamp extension (type -1): 4, 8 or 12 bytes */
const TIMESTAMP = 0xff;
/** msgpackr's `undefined`: fixext 1 of type 0 */
const UNDEFINED = 0x00;

/**
 * Why `buf` is not one MessagePack value within `limits` made of the link's types, or undefined
 * when it is. Every array and map must hold the values it announces within `buf`, and `buf` must
 * end where the value does.
 */
export function msgpackProblem(buf: Uint8Array, limits: MsgpackLimits): string | undefined {
  const end = buf.length;
  let pos = 0;
  let elements = 0;
  /** values still to read in each array or map being read, the innermost last */
  const open: number[] = [];
  let left = 1;
  for (;;) {
    if (left === 0) {
      if (open.length === 0) break;
      left = open.pop()!;
      continue;
    }
    left--;
    if (++elements > limits.elements) return `holds more than ${limits.elements} values`;
    if (pos >= end) return TRUNCATED;
    const token = buf[pos++];
    // fixints, nil, booleans: the token is the value
    if (token <= 0x7f || token >= 0xe0 || token === 0xc0 || token === 0xc2 || token === 0xc3) continue;
    let children = 0;
    if (token <= 0x8f) children = (token & 0x0f) * 2;
    else if (token <= 0x9f) children = token & 0x0f;
    else if (token <= 0xbf) pos += token & 0x1f;
    else {
      // the header's own bytes (a length, an extension's size and type) must be there to be read
      const header = HEADER[token - 0xc0];
      if (header < 0) return `holds a MessagePack type (0x${token.toString(16)}) the link does not take`;
      if (pos + header > end) return TRUNCATED;
      switch (token) {
        case 0xdc:
          children = uint16(buf, pos);
          pos += 2;
          break; // array 16
        case 0xdd:
          children = uint32(buf, pos);
          pos += 4;
          break; // array 32
        case 0xde:
          children = uint16(buf, pos) * 2;
          pos += 2;
          break; // map 16
        case 0xdf:
          children = uint32(buf, pos) * 2;
          pos += 4;
          break; // map 32
        default: {
          const next = skipScalar(buf, pos, token);
          if (typeof next === 'string') return next;
          pos = next;
        }
      }
    }
    if (pos > end) return TRUNCATED;
    if (children > 0) {
      // each value takes a byte at least: more announced than bytes left is a lie told to allocate
      if (children > end - pos) return 'announces more values than it holds';
      // the container opened is at level open.length + 1
      if (open.length >= limits.depth) return `nests deeper than ${limits.depth} levels of arrays and maps`;
      open.push(left);
      left = children;
    }
  }
  if (pos !== end) return `has ${end - pos} bytes after its value`;
  return undefined;
}

const TRUNCATED = 'ends inside a value';

/**
 * Where a string, binary, number or extension ends, its header's bytes at `pos` after `token`, or
 * why the link does not take it: a number, not an object, as the walk allocates nothing per value.
 */
function skipScalar(buf: Uint8Array, pos: number, token: number): number | string {
  switch (token) {
    case 0xc4:
    case 0xd9:
      return pos + 1 + buf[pos]; // bin 8, str 8
    case 0xc5:
    case 0xda:
      return pos + 2 + uint16(buf, pos); // bin 16, str 16
    case 0xc6:
    case 0xdb:
      return pos + 4 + uint32(buf, pos); // bin 32, str 32
    case 0xca:
    case 0xce:
    case 0xd2:
      return pos + 4; // float 32, (u)int 32
    case 0xcb:
    case 0xcf:
    case 0xd3:
      return pos + 8; // float 64, (u)int 64
    case 0xcc:
    case 0xd0:
      return pos + 1; // (u)int 8
    case 0xcd:
    case 0xd1:
      return pos + 2; // (u)int 16
    default: {
      // fixext 1, 4, 8; ext 8
      let at = pos;
      const size = token === 0xd4 ? 1 : token === 0xd6 ? 4 : token === 0xd7 ? 8 : buf[at++];
      const type = buf[at++];
      const ok = type === UNDEFINED ? token === 0xd4 : type === TIMESTAMP && (size === 4 || size === 8 || size === 12);
      if (!ok)
        return `holds a MessagePack extension (type ${type > 127 ? type - 256 : type}, ${size} bytes) the link does not take`;
      return at + size;
    }
  }
}

const uint16 = (b: Uint8Array, at: number): number => (b[at] << 8) | b[at + 1];
const uint32 = (b: Uint8Array, at: number): number =>
  b[at] * 0x1000000 + ((b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]);

/**
 * Bytes of the header after each token from 0xc0 (its length field; an extension's size and
 * type), or -1 for a token the link does not take: 0xc1 (never used), ext 16 and 32, fixext 2
 * and 16. Fixed-size values (numbers) are checked once skipped.
 */
const HEADER: readonly number[] = [
  0,
  -1,
  0,
  0,
  1,
  2,
  4,
  2, // c0 nil, c1, false, true, bin 8/16/32, ext 8 (size, type)
  -1,
  -1,
  0,
  0,
  0,
  0,
  0,
  0, // c8 ext 16, c9 ext 32, float 32/64, uint 8/16/32/64
  0,
  0,
  0,
  0,
  1,
  -1,
  1,
  1, // d0 int 8/16/32/64, fixext 1 (type), fixext 2, fixext 4/8 (type)
  -1,
  1,
  2,
  4,
  2,
  4,
  2,
  4, // d8 fixext 16, str 8/16/32, array 16/32, map 16/32
];
