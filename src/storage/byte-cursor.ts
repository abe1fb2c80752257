// Little binary cursors the record codec writes and reads through: fixed-width
// numbers big-endian, strings and byte strings as a u32 length then the bytes.
// The writer grows one buffer and either hands out a copy of what was written
// (the codec's scratch writer, one record at a time) or views into it once
// writing is done (a commit encodes all its values into one buffer, see
// lmdb-store.ts); the reader copies byte strings out, so nothing it returns
// aliases the input (LMDB memory or a reused buffer).

import { asciiString } from "../lib/ascii-string.ts";
import { assert } from "../lib/assert.ts";

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder("utf-8", { fatal: true });

/** Below this many bytes a string is decoded by hand: TextDecoder's call overhead dominates short strings. */
const shortStringBytesMax = 48;
/** Up to this many UTF-16 units a string is tried as ASCII, copied by hand (ByteWriter.string): no view of the buffer to allocate. */
const asciiByHandUnitsMax = 64;

export class ByteWriter {
  private bytes: Uint8Array;
  private view: DataView;
  private position = 0;

  constructor(initialBytes = 4096) {
    this.bytes = new Uint8Array(Math.max(16, initialBytes));
    this.view = new DataView(this.bytes.buffer);
  }

  reset(): void {
    this.position = 0;
  }

  /** Bytes the buffer holds now (written or not). */
  get capacity(): number {
    return this.bytes.length;
  }

  /** Bytes written since reset(). */
  get length(): number {
    return this.position;
  }

  /** A copy of what was written since reset(). */
  finish(): Uint8Array {
    return this.bytes.slice(0, this.position);
  }

  /**
   * A view of bytes already written, sharing this writer's buffer (which a
   * later write may replace when it grows, so take views once writing is done).
   */
  written(start: number, end: number): Uint8Array {
    assert(start >= 0 && start <= end && end <= this.position, "byte writer: view outside what was written");
    return this.bytes.subarray(start, end);
  }

  /**
   * The whole buffer, for a caller that passes ranges of it by offsets
   * rather than as views (a view is a JS-heap cell each); like written(),
   * only once writing is done, since a later write may replace the buffer.
   */
  buffer(): Uint8Array {
    return this.bytes;
  }

  /** Bytes as they are (no length prefix): an already encoded value. */
  raw(value: Uint8Array): void {
    this.ensure(value.length);
    this.bytes.set(value, this.position);
    this.position += value.length;
  }

  u8(value: number): void {
    this.ensure(1);
    this.bytes[this.position] = value;
    this.position += 1;
  }

  u32(value: number): void {
    this.ensure(4);
    this.view.setUint32(this.position, value);
    this.position += 4;
  }

  f64(value: number): void {
    this.ensure(8);
    this.view.setFloat64(this.position, value);
    this.position += 8;
  }

  string(value: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    this.ensure(4 + value.length * 3);
    const start = this.position + 4;
    const written = value.length <= asciiByHandUnitsMax ? this.asciiInto(value, start) : -1;
    const length = written >= 0 ? written : textEncoder.encodeInto(value, this.bytes.subarray(start)).written;
    this.view.setUint32(this.position, length);
    this.position = start + length;
  }

  /**
   * A short ASCII string (ns, topic, id: nearly every string a record holds)
   * copied by hand: encodeInto needs a view of the buffer, one object of
   * garbage per string (two per enqueued item). -1 when a character is not
   * ASCII; the caller then encodes it as UTF-8 over whatever was copied.
   */
  private asciiInto(value: string, start: number): number {
    const bytes = this.bytes;
    for (let i = 0; i < value.length; i++) {
      const unit = value.charCodeAt(i);
      if (unit >= 0x80) return -1;
      bytes[start + i] = unit;
    }
    return value.length;
  }

  byteString(value: Uint8Array): void {
    this.ensure(4 + value.length);
    this.view.setUint32(this.position, value.length);
    this.bytes.set(value, this.position + 4);
    this.position += 4 + value.length;
  }

  private ensure(extraBytes: number): void {
    const needed = this.position + extraBytes;
    if (needed <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < needed) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.bytes.subarray(0, this.position));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }
}

/** Thrown when bytes are too short or malformed; the codec turns it into a clear message. */
class ByteReadError extends Error {
  override name = "ByteReadError";
}

/**
 * Scratch for reading a big-endian f64 without a DataView: recovery reads a
 * million records, and a DataView per record (which also makes the engine
 * materialise the input's ArrayBuffer) cost more than the decoding itself.
 */
const f64Scratch = new Float64Array(1);
const f64ScratchBytes = new Uint8Array(f64Scratch.buffer);
// The byte order below is little-endian's (every platform Bun runs on).
f64Scratch[0] = 1;
assert(f64ScratchBytes[7] === 0x3f, "byte cursor: the platform is not little-endian");

export class ByteReader {
  position: number;

  constructor(
    private readonly bytes: Uint8Array,
    start = 0,
    /** Where the value ends: the input may be a larger buffer (lmdb-js hands a decoder its shared read buffer). */
    private readonly end = bytes.length,
  ) {
    assert(end <= bytes.length, "byte reader: end beyond the input");
    this.position = start;
  }

  get remaining(): number {
    return this.end - this.position;
  }

  u8(): number {
    this.need(1);
    const value = this.bytes[this.position];
    assert(value !== undefined);
    this.position += 1;
    return value;
  }

  u32(): number {
    this.need(4);
    const bytes = this.bytes;
    const at = this.position;
    const value = (bytes[at] as number) * 0x100_0000 + (((bytes[at + 1] as number) << 16) | ((bytes[at + 2] as number) << 8) | (bytes[at + 3] as number));
    this.position += 4;
    return value;
  }

  f64(): number {
    this.need(8);
    const bytes = this.bytes;
    const at = this.position;
    for (let index = 0; index < 8; index++) f64ScratchBytes[7 - index] = bytes[at + index] as number;
    this.position += 8;
    return f64Scratch[0] as number;
  }

  string(): string {
    const length = this.u32();
    this.need(length);
    const start = this.position;
    this.position += length;
    if (length <= shortStringBytesMax) {
      const ascii = asciiOrNull(this.bytes, start, length);
      if (ascii !== null) return ascii;
    }
    return textDecoder.decode(this.bytes.subarray(start, start + length));
  }

  /**
   * string(), but returns `previous` itself when the bytes spell it: recovery
   * decodes the same namespace and topic names a million times, and comparing
   * costs less than building a string that is dropped at once.
   */
  stringReusing(previous: string): string {
    const length = this.u32();
    this.need(length);
    const start = this.position;
    if (length === previous.length) {
      let same = true;
      // ASCII only: there one byte is one UTF-16 unit. Anything else takes string(),
      // which also refuses malformed UTF-8.
      for (let index = 0; index < length; index++) {
        const byte = this.bytes[start + index] as number;
        if (byte >= 0x80 || byte !== previous.charCodeAt(index)) {
          same = false;
          break;
        }
      }
      if (same) {
        this.position += length;
        return previous;
      }
    }
    this.position -= 4;
    return this.string();
  }

  /** Skip a byte string (u32 length + bytes) without copying it. */
  skipByteString(): void {
    const length = this.u32();
    this.need(length);
    this.position += length;
  }

  /**
   * A copy, never a view into the input, and a plain Uint8Array: on a Node
   * Buffer (what lmdb-js returns) `slice` is a view, and lmdb-js reuses the
   * buffer getBinaryFast returns for its next read.
   */
  byteString(): Uint8Array {
    const length = this.u32();
    this.need(length);
    const start = this.position;
    this.position += length;
    const copy = new Uint8Array(length);
    copy.set(this.bytes.subarray(start, start + length));
    return copy;
  }

  /** A view into the input, for bytes decoded at once and dropped (e.g. a nested MessagePack value). */
  byteView(): Uint8Array {
    const length = this.u32();
    this.need(length);
    const start = this.position;
    this.position += length;
    return this.bytes.subarray(start, start + length);
  }

  private need(byteCount: number): void {
    if (this.position + byteCount > this.end) {
      throw new ByteReadError(`record truncated: needs ${byteCount} bytes at offset ${this.position} of ${this.end}`);
    }
  }
}

/** Write a big-endian u32 at `at` in place, without a DataView (see f64Scratch). */
export function setU32(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value >>> 24;
  bytes[at + 1] = (value >>> 16) & 0xff;
  bytes[at + 2] = (value >>> 8) & 0xff;
  bytes[at + 3] = value & 0xff;
}

/** Write a big-endian f64 at `at` in place, without a DataView (see f64Scratch). */
export function setF64(bytes: Uint8Array, at: number, value: number): void {
  f64Scratch[0] = value;
  for (let index = 0; index < 8; index++) bytes[at + index] = f64ScratchBytes[7 - index] as number;
}

/** Read a big-endian f64 at `at`, without a DataView (see f64Scratch); the caller checked the bounds. */
export function getF64(bytes: Uint8Array, at: number): number {
  for (let index = 0; index < 8; index++) f64ScratchBytes[7 - index] = bytes[at + index] as number;
  return f64Scratch[0] as number;
}

/** The string when every byte is ASCII, else null (the caller falls back to TextDecoder): one native call, not a char at a time (decisions/052). */
function asciiOrNull(bytes: Uint8Array, start: number, length: number): string | null {
  let ored = 0;
  for (let index = start; index < start + length; index++) ored |= bytes[index] as number;
  return ored >= 0x80 ? null : asciiString(bytes, start, length);
}
