// A bounded cache from the bytes of a small MessagePack map to its decoded
// value, for the request decoder's `capabilities` field: every worker sends
// the same capabilities on every dequeue, and decoding them afresh, copying
// them (RequestReader.anyMap) and parsing them into a worker kind (the
// engine) costs about 30 JS-heap cells a dequeue
// (docs/decisions/005-request-decoder.md). A hit returns the map decoded last
// time, frozen, so the copy and the parse can be skipped for it
// (isSharedDecodedMap; the engine memoizes the parse of a frozen map by
// identity).
//
// Only flat maps are cached: string keys, values nil, booleans, integers,
// strings or arrays of those (what capabilities hold). A float (which may
// decode as a WholeFloat the reader must unmark), a bin (a view of the frame),
// a nested map or anything unusual is decoded each time, by the decoder's
// ordinary path; so is a map longer than capabilitiesMapCachedBytesMax.
// Entries are keyed by a hash of the bytes and checked byte for byte; at
// capabilitiesMapsCachedMax entries the oldest goes.

import { capabilitiesMapCachedBytesMax, capabilitiesMapsCachedMax } from "../limits.ts";

/** Maps this module handed out: frozen, float-free, shared by every request that sent the same bytes. */
const sharedMaps = new WeakSet<object>();

/** True for a map from a RepeatedMapCache: frozen, holding no WholeFloat and no bin, so it needs no copy. */
export function isSharedDecodedMap(value: object): boolean {
  return sharedMaps.has(value);
}

interface Entry {
  bytes: Uint8Array;
  value: Record<string, unknown>;
}

export class RepeatedMapCache {
  private readonly entries = new Map<number, Entry>();

  constructor(
    private readonly entriesMax = capabilitiesMapsCachedMax,
    private readonly bytesMax = capabilitiesMapCachedBytesMax,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /**
   * The end of the cacheable map starting at bytes[start], or -1 when it is
   * not one (not a flat map of the forms above, cut short, or too long).
   */
  cacheableEnd(bytes: Uint8Array, start: number, end: number): number {
    const limit = Math.min(end, start + this.bytesMax);
    if (start >= limit) return -1;
    const head = bytes[start] as number;
    if (head < 0x80 || head > 0x8f) return -1;
    let pos = start + 1;
    for (let i = head - 0x80; i > 0; i--) {
      const key = bytes[pos];
      if (key === undefined || key < 0xa0 || key > 0xbf) return -1;
      pos += 1 + key - 0xa0;
      if (pos >= limit) return -1;
      const valueHead = bytes[pos] as number;
      if (valueHead >= 0x90 && valueHead <= 0x9f) {
        pos++;
        for (let k = valueHead - 0x90; k > 0 && pos >= 0; k--) pos = scalarEnd(bytes, pos, limit);
      } else {
        pos = scalarEnd(bytes, pos, limit);
      }
      if (pos < 0) return -1;
    }
    return pos <= limit ? pos : -1;
  }

  /** The value cached for bytes[start, end), or undefined. */
  get(bytes: Uint8Array, start: number, end: number): Record<string, unknown> | undefined {
    const entry = this.entries.get(hashOf(bytes, start, end));
    if (entry === undefined || !sameBytes(entry.bytes, bytes, start, end)) return undefined;
    return entry.value;
  }

  /** Keep `value`, decoded from bytes[start, end): it is frozen (with its arrays) and returned. */
  put(bytes: Uint8Array, start: number, end: number, value: Record<string, unknown>): Record<string, unknown> {
    for (const field of Object.values(value)) if (Array.isArray(field)) Object.freeze(field);
    Object.freeze(value);
    sharedMaps.add(value);
    const hash = hashOf(bytes, start, end);
    // A collision replaces the entry; at the bound the oldest goes (a Map iterates in insertion order).
    this.entries.delete(hash);
    if (this.entries.size >= this.entriesMax) this.entries.delete(this.entries.keys().next().value as number);
    this.entries.set(hash, { bytes: bytes.slice(start, end), value });
    return value;
  }
}

/** The end of one nil, boolean, integer or string at bytes[pos], or -1 for any other form or past `limit`. */
function scalarEnd(bytes: Uint8Array, pos: number, limit: number): number {
  if (pos >= limit) return -1;
  const head = bytes[pos] as number;
  let next: number;
  if (head < 0x80 || head >= 0xe0 || head === 0xc0 || head === 0xc2 || head === 0xc3) next = pos + 1;
  else if (head >= 0xa0 && head <= 0xbf) next = pos + 1 + head - 0xa0;
  else if (head === 0xcc || head === 0xd0) next = pos + 2;
  else if (head === 0xcd || head === 0xd1) next = pos + 3;
  else if (head === 0xce || head === 0xd2) next = pos + 5;
  else if (head === 0xcf || head === 0xd3) next = pos + 9;
  else if (head === 0xd9) next = pos + 2 + ((bytes[pos + 1] as number | undefined) ?? limit);
  else return -1;
  return next <= limit ? next : -1;
}

function hashOf(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5 ^ (end - start);
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193);
  hash ^= hash >>> 15;
  return Math.imul(hash, 0x2c1b3c6d) >>> 0;
}

function sameBytes(kept: Uint8Array, bytes: Uint8Array, start: number, end: number): boolean {
  if (kept.length !== end - start) return false;
  for (let i = 0; i < kept.length; i++) if (kept[i] !== bytes[start + i]) return false;
  return true;
}
