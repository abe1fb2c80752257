// Reading one or two fields of a MessagePack reply where it lies, without
// decoding the rest: the Jupiter scenario's worker needs a dequeue reply's
// `ok` and its first item's receipt, and an ack reply's `acked`. Decoding the
// whole dequeue reply (an item of nine fields, its payload and metadata)
// takes 2.0-2.3 µs per reply on the 2-core build box, on two cores the
// generator shares with the server it measures (jupiter-worker.ts has the
// measured effect).
//
// Every function takes the buffer and an offset and returns an offset (or a
// value); nothing is allocated. Offsets past `end` mean a truncated value:
// the callers check what they read against the frame's end.

/** Offset just past the MessagePack value at `at`. */
export function skipValue(bytes: Uint8Array, at: number): number {
  const marker = bytes[at] as number;
  if (marker <= 0x7f || marker >= 0xe0) return at + 1; // positive / negative fixint
  if (marker <= 0x8f) return skipEntries(bytes, at + 1, 2 * (marker & 0x0f)); // fixmap
  if (marker <= 0x9f) return skipEntries(bytes, at + 1, marker & 0x0f); // fixarray
  if (marker <= 0xbf) return at + 1 + (marker & 0x1f); // fixstr
  switch (marker) {
    case 0xc0: // nil
    case 0xc2: // false
    case 0xc3: // true
      return at + 1;
    case 0xc4: // bin 8
    case 0xd9: // str 8
      return at + 2 + (bytes[at + 1] as number);
    case 0xc5: // bin 16
    case 0xda: // str 16
      return at + 3 + uint16(bytes, at + 1);
    case 0xc6: // bin 32
    case 0xdb: // str 32
      return at + 5 + uint32(bytes, at + 1);
    case 0xc7: // ext 8
      return at + 3 + (bytes[at + 1] as number);
    case 0xc8: // ext 16
      return at + 4 + uint16(bytes, at + 1);
    case 0xc9: // ext 32
      return at + 6 + uint32(bytes, at + 1);
    case 0xcc: // uint 8
    case 0xd0: // int 8
      return at + 2;
    case 0xcd: // uint 16
    case 0xd1: // int 16
      return at + 3;
    case 0xca: // float 32
    case 0xce: // uint 32
    case 0xd2: // int 32
      return at + 5;
    case 0xcb: // float 64
    case 0xcf: // uint 64
    case 0xd3: // int 64
      return at + 9;
    case 0xd4: // fixext 1
      return at + 3;
    case 0xd5: // fixext 2
      return at + 4;
    case 0xd6: // fixext 4
      return at + 6;
    case 0xd7: // fixext 8
      return at + 10;
    case 0xd8: // fixext 16
      return at + 18;
    case 0xdc: // array 16
      return skipEntries(bytes, at + 3, uint16(bytes, at + 1));
    case 0xdd: // array 32
      return skipEntries(bytes, at + 5, uint32(bytes, at + 1));
    case 0xde: // map 16
      return skipEntries(bytes, at + 3, 2 * uint16(bytes, at + 1));
    case 0xdf: // map 32
      return skipEntries(bytes, at + 5, 2 * uint32(bytes, at + 1));
    default: // 0xc1, never used
      throw new Error(`reply-peek: byte 0x${marker.toString(16)} at ${at} starts no MessagePack value`);
  }
}

function skipEntries(bytes: Uint8Array, at: number, values: number): number {
  let next = at;
  for (let i = 0; i < values; i++) next = skipValue(bytes, next);
  return next;
}

function uint16(bytes: Uint8Array, at: number): number {
  return ((bytes[at] as number) << 8) | (bytes[at + 1] as number);
}

function uint32(bytes: Uint8Array, at: number): number {
  return (((bytes[at] as number) << 24) | ((bytes[at + 1] as number) << 16) | ((bytes[at + 2] as number) << 8) | (bytes[at + 3] as number)) >>> 0;
}

/** Entries of the map at `at` (-1 when no map starts there). */
function mapSize(bytes: Uint8Array, at: number): number {
  const marker = bytes[at] as number;
  if ((marker & 0xf0) === 0x80) return marker & 0x0f;
  if (marker === 0xde) return uint16(bytes, at + 1);
  if (marker === 0xdf) return uint32(bytes, at + 1);
  return -1;
}

function mapHeaderBytes(marker: number): number {
  return marker === 0xde ? 3 : marker === 0xdf ? 5 : 1;
}

/** Whether the fixstr at `at` spells `key` (ASCII): the replies' keys are all short fixstrs. */
function isKey(bytes: Uint8Array, at: number, key: string): boolean {
  if (bytes[at] !== (0xa0 | key.length)) return false;
  for (let i = 0; i < key.length; i++) if (bytes[at + 1 + i] !== key.charCodeAt(i)) return false;
  return true;
}

/** Offset of the value under `key` in the map at `at`, or -1 when the map lacks it (or no map starts there). */
export function mapValue(bytes: Uint8Array, at: number, key: string): number {
  const size = mapSize(bytes, at);
  if (size < 0) return -1;
  let next = at + mapHeaderBytes(bytes[at] as number);
  for (let i = 0; i < size; i++) {
    const value = skipValue(bytes, next);
    if (isKey(bytes, next, key)) return value;
    next = skipValue(bytes, value);
  }
  return -1;
}

/** Offset of the first element of the array at `at`, or -1 when it is empty (or no array starts there). */
export function firstElement(bytes: Uint8Array, at: number): number {
  const marker = bytes[at] as number;
  if ((marker & 0xf0) === 0x90) return (marker & 0x0f) === 0 ? -1 : at + 1;
  if (marker === 0xdc) return uint16(bytes, at + 1) === 0 ? -1 : at + 3;
  if (marker === 0xdd) return uint32(bytes, at + 1) === 0 ? -1 : at + 5;
  return -1;
}

/** The unsigned integer at `at`, or -1 when none starts there. */
export function readUint(bytes: Uint8Array, at: number): number {
  const marker = bytes[at] as number;
  if (marker <= 0x7f) return marker;
  if (marker === 0xcc) return bytes[at + 1] as number;
  if (marker === 0xcd) return uint16(bytes, at + 1);
  if (marker === 0xce) return uint32(bytes, at + 1);
  return -1;
}

/** Whether the value at `at` is MessagePack `true`. */
export function isTrue(bytes: Uint8Array, at: number): boolean {
  return at >= 0 && bytes[at] === 0xc3;
}

/** Whether a str starts at `at` (any of the four string markers). */
export function isString(bytes: Uint8Array, at: number): boolean {
  const marker = bytes[at] as number;
  return (marker & 0xe0) === 0xa0 || marker === 0xd9 || marker === 0xda || marker === 0xdb;
}
