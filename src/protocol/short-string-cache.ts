// A bounded cache from the bytes of a short ASCII string to the string, for
// the request-frame decoder (request-frame-decoder.ts). Requests repeat the
// same few short strings constantly (op names, field names, namespaces,
// topics, capability names and values), and building each one afresh costs
// an allocation and a copy per string; a hit returns the string made last
// time.
//
// The table is two-way set-associative (a set is chosen by a hash of the
// bytes), so a lookup is one hash and at most two byte comparisons, and its
// memory is fixed: entryCount x cachedStringBytesMax bytes plus the strings.
// Unique strings (receipts, ids) must not evict the repeated ones, so each
// entry has a "used" mark set by every hit: a miss replaces only an entry not
// used since the last miss in its set (clearing the marks when both were),
// so a string repeated more often than unique strings land in its set stays.

import { asciiString } from "../lib/ascii-string.ts";

/**
 * Longest string cached, in bytes: names and values the protocol repeats
 * (op, ns, topic, feature names and values) are shorter; a longer string is
 * rarely repeated and costs more to compare than to build.
 */
export const cachedStringBytesMax = 32;

/** Sets in the table (a power of two), of two entries each: far more than the distinct short strings one workload repeats, for 32 KiB of bytes. */
const setCount = 512;

const fnvOffset = 0x811c9dc5;
const fnvPrime = 0x01000193;

export class ShortStringCache {
  private readonly entryBytes = new Uint8Array(setCount * 2 * cachedStringBytesMax);
  /** Length of each entry's string, -1 when empty. */
  private readonly entryLengths = new Int32Array(setCount * 2).fill(-1);
  private readonly entryUsed = new Uint8Array(setCount * 2);
  private readonly entryStrings: string[] = new Array<string>(setCount * 2).fill("");

  /**
   * The string held by `bytes[start, start + length)` when those bytes are
   * all ASCII, else null (the caller decodes UTF-8 itself). `length` is from
   * 1 to cachedStringBytesMax.
   */
  asciiString(bytes: Uint8Array, start: number, length: number): string | null {
    let hash = fnvOffset ^ length;
    let ored = 0;
    for (let i = start; i < start + length; i++) {
      const byte = bytes[i] as number;
      ored |= byte;
      hash = Math.imul(hash ^ byte, fnvPrime);
    }
    if (ored >= 0x80) return null;
    // FNV-1a barely mixes its last byte into the low bits ("op" and "os" would share a set).
    hash ^= hash >>> 15;
    hash = Math.imul(hash, 0x2c1b3c6d);
    hash ^= hash >>> 12;
    const first = (hash & (setCount - 1)) * 2;
    if (this.matches(first, bytes, start, length)) return this.hit(first);
    if (this.matches(first + 1, bytes, start, length)) return this.hit(first + 1);
    const text = asciiString(bytes, start, length);
    const used = this.entryUsed;
    const victim = used[first] === 0 ? first : used[first + 1] === 0 ? first + 1 : -1;
    if (victim < 0) {
      used[first] = 0;
      used[first + 1] = 0;
      return text;
    }
    // Byte by byte: a subarray to copy from would be one more allocation per miss (every receipt is one).
    const entryBytes = this.entryBytes;
    const base = victim * cachedStringBytesMax;
    for (let i = 0; i < length; i++) entryBytes[base + i] = bytes[start + i] as number;
    this.entryLengths[victim] = length;
    this.entryStrings[victim] = text;
    return text;
  }

  private matches(entry: number, bytes: Uint8Array, start: number, length: number): boolean {
    if (this.entryLengths[entry] !== length) return false;
    const entryBytes = this.entryBytes;
    const base = entry * cachedStringBytesMax;
    for (let i = 0; i < length; i++) if (entryBytes[base + i] !== bytes[start + i]) return false;
    return true;
  }

  private hit(entry: number): string {
    this.entryUsed[entry] = 1;
    return this.entryStrings[entry] as string;
  }
}
