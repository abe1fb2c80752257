// The server's request-frame decoder: a hand-written MessagePack reader for
// the forms clients send, producing exactly what RequestDecoder.decodeBody
// (msgpack-codec.ts) produces, at a fraction of its cost. Profiles of the
// Jupiter load put the library's generic decoding at about 12% of the main
// thread (docs/decisions/005-request-decoder.md), most of it building short
// strings one char code at a time and keeping its state stack; here short
// ASCII strings come from a bounded cache (short-string-cache.ts), other
// ASCII strings from one native latin1 decode, and nesting is plain
// recursion.
//
// "Exactly" is kept by never deciding anything unusual here: a frame holding
// an ext type, a reserved byte, a map key that is not a string or an
// integer, `__proto__`, a short string that is not well-formed UTF-8, a
// length past the end or over its bound, nesting past depthMax, or trailing
// bytes is handed whole to RequestDecoder, which decodes it or throws its own
// error (the dispatcher answers BAD_FRAME). So a client can never tell which
// decoder read its frame; test/protocol/request-frame-decoder.test.ts checks
// the two against each other on random values.
//
// Values, as the library gives them: maps are plain objects filled by
// assignment (integer keys become their decimal names), arrays are built with
// their length, bins are copies of their bytes (the frame's buffer is the
// connection's to reuse; an op keeps a bin, such as a payload, as it is), 64-bit integers are high * 2^32 + low (rounded past 2^53), and a
// float holding a whole number is a WholeFloat (integer fields refuse it).

import { RequestDecoder, WholeFloat, createRequestDecoder, type RequestDecoderOptions } from "./msgpack-codec.ts";
import { RepeatedMapCache } from "./repeated-map-cache.ts";
import { asciiString } from "../lib/ascii-string.ts";
import { ShortStringCache, cachedStringBytesMax } from "./short-string-cache.ts";

/** Thrown inside the fast path when a frame needs the library decoder; never escapes decodeBody. */
const needsLibrary = new Error("needs the library decoder");

/**
 * Up to this length the library builds a string in JavaScript, which does no
 * UTF-8 checking and never strips a byte order mark (utf8DecodeJs); longer
 * strings go through TextDecoder. Mirrored here so both agree on every
 * string: a short non-ASCII string is accepted only when it is well-formed
 * UTF-8 (where the two ways agree) and a long one uses the same TextDecoder.
 * It is TEXT_DECODER_THRESHOLD in the library's utf8.mjs (3.1.x); the
 * differential test has cases on both sides of it, so a version that moves
 * it fails there.
 */
const libraryJsStringBytesMax = 200;

const emptyBytes = new Uint8Array(0);
const longStringDecoder = new TextDecoder();
const shortStringDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

export class RequestFrameDecoder {
  private readonly library: RequestDecoder;
  private readonly depthMax: number;
  private readonly lengthMax: number;
  private readonly strings = new ShortStringCache();
  /** A request's `capabilities` map by its bytes: a worker sends the same one on every dequeue (repeated-map-cache.ts). */
  private readonly capabilityMaps = new RepeatedMapCache();
  private readonly floatBytes = new Uint8Array(8);
  private readonly floatView = new DataView(this.floatBytes.buffer);
  private bytes: Uint8Array = emptyBytes;
  private pos = 0;
  private end = 0;
  /** Frames handed to RequestDecoder so far (tests read it to see which decoder answered). */
  fallbackCount = 0;

  constructor(options: RequestDecoderOptions) {
    this.library = createRequestDecoder(options);
    this.depthMax = options.depthMax;
    this.lengthMax = options.frameBytesMax;
  }

  /**
   * Decode one frame body, bytes [start, end) of `bytes` (the whole array by
   * default), or throw what RequestDecoder throws for it. Offsets rather than
   * a view: the connection's frame decoder hands frames over that way.
   */
  decodeBody(bytes: Uint8Array, start = 0, end = bytes.length): unknown {
    this.bytes = bytes;
    this.pos = start;
    this.end = end;
    try {
      const value = this.value(0);
      if (this.pos !== end) throw needsLibrary;
      return value;
    } catch (error) {
      if (error !== needsLibrary) throw error;
      this.fallbackCount++;
      return this.library.decodeBody(start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end));
    } finally {
      this.bytes = emptyBytes;
    }
  }

  /**
   * One value at this.pos. Recursive, as unmarkFloats is: the depth is
   * bounded by depthMax (32 by default) before each descent, and recursion
   * costs less than an explicit stack of states here.
   */
  private value(depth: number): unknown {
    const head = this.byte();
    if (head < 0x80) return head;
    if (head >= 0xe0) return head - 0x100;
    if (head < 0x90) return this.map(head - 0x80, depth);
    if (head < 0xa0) return this.array(head - 0x90, depth);
    if (head < 0xc0) return this.string(head - 0xa0);
    switch (head) {
      case 0xc0:
        return null;
      case 0xc2:
        return false;
      case 0xc3:
        return true;
      case 0xc4:
        return this.bin(this.uint(1));
      case 0xc5:
        return this.bin(this.uint(2));
      case 0xc6:
        return this.bin(this.uint(4));
      case 0xca:
        return this.float(4);
      case 0xcb:
        return this.float(8);
      case 0xcc:
        return this.uint(1);
      case 0xcd:
        return this.uint(2);
      case 0xce:
        return this.uint(4);
      case 0xcf: {
        const high = this.uint(4);
        return high * 4294967296 + this.uint(4);
      }
      case 0xd0:
        return (this.uint(1) << 24) >> 24;
      case 0xd1:
        return (this.uint(2) << 16) >> 16;
      case 0xd2:
        return this.uint(4) | 0;
      case 0xd3: {
        const high = this.uint(4) | 0;
        return high * 4294967296 + this.uint(4);
      }
      case 0xd9:
        return this.string(this.uint(1));
      case 0xda:
        return this.string(this.uint(2));
      case 0xdb:
        return this.string(this.uint(4));
      case 0xdc:
        return this.array(this.uint(2), depth);
      case 0xdd:
        return this.array(this.uint(4), depth);
      case 0xde:
        return this.map(this.uint(2), depth);
      case 0xdf:
        return this.map(this.uint(4), depth);
      default:
        // 0xc1 (never used) and the ext types: the library's answer.
        throw needsLibrary;
    }
  }

  private map(size: number, depth: number): Record<string, unknown> {
    const map: Record<string, unknown> = {};
    if (size === 0) return map;
    // Each entry takes at least two bytes; the library bounds maps by the body's length.
    if (depth >= this.depthMax || size * 2 > this.end - this.pos) throw needsLibrary;
    for (let i = 0; i < size; i++) {
      const key = this.key();
      map[key] = repeatsOften(depth, key) ? this.repeatedMap(depth + 1) : this.value(depth + 1);
    }
    return map;
  }

  /** A value that is often the same bytes as before: the cached map when it is one, else decoded (and kept when cacheable). */
  private repeatedMap(depth: number): unknown {
    const start = this.pos;
    const end = this.capabilityMaps.cacheableEnd(this.bytes, start, this.end);
    // A hit is bytes this decoder decoded here before, so its checks (depth, strings) passed then.
    if (end < 0) return this.value(depth);
    const cached = this.capabilityMaps.get(this.bytes, start, end);
    if (cached !== undefined) {
      this.pos = end;
      return cached;
    }
    const value = this.value(depth);
    if (this.pos !== end) return value;
    return this.capabilityMaps.put(this.bytes, start, end, value as Record<string, unknown>);
  }

  /** A map key: a string other than __proto__, or an integer (the library's mapKeyConverter would refuse the rest). */
  private key(): string | number {
    if (this.pos >= this.end) throw needsLibrary;
    const head = this.bytes[this.pos] as number;
    if (head >= 0xa0 && head < 0xc0) {
      this.pos++;
      const key = this.string(head - 0xa0);
      if (key === "__proto__") throw needsLibrary;
      return key;
    }
    if ((head >= 0xd9 && head <= 0xdb) || head < 0x80 || head >= 0xe0 || (head >= 0xcc && head <= 0xd3)) {
      const key = this.value(0);
      if (key === "__proto__") throw needsLibrary;
      return key as string | number;
    }
    throw needsLibrary;
  }

  private array(size: number, depth: number): unknown[] {
    if (size === 0) return [];
    if (depth >= this.depthMax || size > this.end - this.pos) throw needsLibrary;
    const array: unknown[] = new Array(size);
    for (let i = 0; i < size; i++) array[i] = this.value(depth + 1);
    return array;
  }

  private string(length: number): string {
    const start = this.pos;
    if (length > this.lengthMax || length > this.end - start) throw needsLibrary;
    this.pos = start + length;
    const bytes = this.bytes;
    if (length === 0) return "";
    if (length <= cachedStringBytesMax) {
      const ascii = this.strings.asciiString(bytes, start, length);
      if (ascii !== null) return ascii;
    } else if (length > libraryJsStringBytesMax) {
      return longStringDecoder.decode(bytes.subarray(start, start + length));
    } else if (isAscii(bytes, start, length)) {
      return asciiString(bytes, start, length);
    }
    if (!isWellFormedUtf8(bytes, start, start + length)) throw needsLibrary;
    return shortStringDecoder.decode(bytes.subarray(start, start + length));
  }

  private bin(length: number): Uint8Array {
    const start = this.pos;
    if (length > this.lengthMax || length > this.end - start) throw needsLibrary;
    this.pos = start + length;
    // A copy straight from the frame, not a view and then a copy of it: one JS-heap cell per payload, not two.
    return this.bytes.slice(start, start + length);
  }

  private float(width: 4 | 8): number | WholeFloat {
    const start = this.pos;
    if (width > this.end - start) throw needsLibrary;
    this.floatBytes.set(this.bytes.subarray(start, start + width));
    this.pos = start + width;
    const value = width === 4 ? this.floatView.getFloat32(0) : this.floatView.getFloat64(0);
    return Number.isInteger(value) ? new WholeFloat(value) : value;
  }

  private byte(): number {
    if (this.pos >= this.end) throw needsLibrary;
    return this.bytes[this.pos++] as number;
  }

  /** A big-endian unsigned integer of 1, 2 or 4 bytes. */
  private uint(width: 1 | 2 | 4): number {
    const pos = this.pos;
    if (width > this.end - pos) throw needsLibrary;
    const bytes = this.bytes;
    this.pos = pos + width;
    if (width === 1) return bytes[pos] as number;
    if (width === 2) return ((bytes[pos] as number) << 8) | (bytes[pos + 1] as number);
    return (((bytes[pos] as number) << 24) | ((bytes[pos + 1] as number) << 16) | ((bytes[pos + 2] as number) << 8) | (bytes[pos + 3] as number)) >>> 0;
  }
}

function isAscii(bytes: Uint8Array, start: number, length: number): boolean {
  let ored = 0;
  for (let i = start; i < start + length; i++) ored |= bytes[i] as number;
  return ored < 0x80;
}

/**
 * True when `bytes[start, end)` is well-formed UTF-8 (RFC 3629: no overlong
 * forms, no surrogates, nothing past U+10FFFF, no sequence cut short).
 */
export function isWellFormedUtf8(bytes: Uint8Array, start: number, end: number): boolean {
  let i = start;
  while (i < end) {
    const lead = bytes[i] as number;
    if (lead < 0x80) {
      i++;
      continue;
    }
    let trailing: number;
    let low = 0x80;
    let high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) trailing = 1;
    else if (lead >= 0xe0 && lead <= 0xef) {
      trailing = 2;
      if (lead === 0xe0) low = 0xa0;
      else if (lead === 0xed) high = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      trailing = 3;
      if (lead === 0xf0) low = 0x90;
      else if (lead === 0xf4) high = 0x8f;
    } else return false;
    if (i + trailing >= end) return false;
    const second = bytes[i + 1] as number;
    if (second < low || second > high) return false;
    for (let k = 2; k <= trailing; k++) {
      const next = bytes[i + k] as number;
      if (next < 0x80 || next > 0xbf) return false;
    }
    i += trailing + 1;
  }
  return true;
}

/**
 * Maps that repeat between requests, byte for byte: a dequeue's
 * `capabilities` (a worker sends the same on every dequeue), and an enqueued
 * item's `requires` and `prefers` (items of one kind of job carry the same;
 * an item map sits at depth 2: request, `items`, item). The cache hands the
 * same frozen map out again, so the engine parses each once
 * (matching/frozen-parses.ts).
 */
function repeatsOften(depth: number, key: string | number): boolean {
  if (depth === 0) return key === "capabilities";
  return depth === 2 && (key === "requires" || key === "prefers");
}
