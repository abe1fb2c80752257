// The stored values of the items committed most recently, kept in memory so
// that a delivery of one of them does not walk LMDB's B-tree
// (docs/decisions/044-recent-values.md). In priority order a delivery's read
// lands anywhere in the map: 2-3 µs a read on the main thread, a fifth of a
// Jupiter acquisition, most of it the page search and the fault of a page
// the map dropped. An item is usually delivered soon after it was written, so
// the newest values are the ones asked for.
//
// A ring of bytes and a table of slots, both allocated once. A landed
// commit's values, back to back in its slab, are copied into the ring in one
// run, and each key's slot (keys are one sequence for the whole store,
// writer.nextKey, so consecutive keys take consecutive slots) records where
// its value starts, its key, shard and length. Old values are never evicted
// one by one: the ring writes over them, and a slot is trusted only while
// the bytes it names have not been written over since (positions count every
// byte ever written) and it names the key asked for. A key whose slot a later
// key took is simply not found: the reader falls back to LMDB.
//
// It holds exactly what LMDB holds as the engine knows it: it is written only
// after a commit has landed (puts replace, deletes and acks drop), and a
// failed commit changed nothing in either. Pages of the ring are touched only
// as it fills: a server that has written less than the ring holds less.

/** Numbers per slot: ring position + 1 (0 for none), key, shard * 2^32 + length. */
const slotFields = 3;
const shardFactor = 2 ** 32;

export class RecentValues {
  private readonly ring: Uint8Array;
  private readonly slots: Float64Array;
  private readonly slotMask: number;
  /** Bytes ever written, skipped tails included: a value at p is intact while written <= p + ringBytes. */
  private written = 0;
  /** Largest run copied at once (a quarter of the ring), and largest value kept (a sixteenth): one large commit or value does not flush the ring. */
  private readonly runBytesMax: number;
  private readonly valueBytesMax: number;
  /** Reads answered from the ring, and reads it could not answer (metrics). */
  hits = 0;
  misses = 0;

  /** `ringBytes` at least 1 KiB; `slotCount` a power of two. */
  constructor(
    readonly ringBytes: number,
    slotCount: number,
  ) {
    if (!Number.isSafeInteger(ringBytes) || ringBytes < 1024) throw new RangeError(`recent values: ring of ${ringBytes} bytes (at least 1024)`);
    if (slotCount < 1 || (slotCount & (slotCount - 1)) !== 0) throw new RangeError(`recent values: ${slotCount} slots (a power of two)`);
    this.ring = new Uint8Array(ringBytes);
    this.slots = new Float64Array(slotCount * slotFields);
    this.slotMask = slotCount - 1;
    this.runBytesMax = Math.floor(ringBytes / 4);
    this.valueBytesMax = Math.floor(ringBytes / 16);
  }

  /** Bytes of the ring written so far, up to its size: what it adds to the process's memory. */
  get residentBytes(): number {
    return Math.min(this.written, this.ringBytes);
  }

  /**
   * Copy bytes start..end of `source` (a landed commit's values, back to
   * back) into the ring; returns the ring position of `start`, for index(),
   * or -1 when the run is too large to copy at once (put each value instead).
   */
  append(source: Uint8Array, start: number, end: number): number {
    const length = end - start;
    if (length > this.runBytesMax) return -1;
    let at = this.written % this.ringBytes;
    if (at + length > this.ringBytes) {
      // Runs never wrap: the tail is skipped (and counts as written, so what it held is no longer trusted).
      this.written += this.ringBytes - at;
      at = 0;
    }
    this.ring.set(source.subarray(start, end), at);
    const position = this.written;
    this.written += length;
    return position;
  }

  /** `shard`/`key`'s value is the `length` bytes at ring `position` (from append). */
  index(shard: number, key: number, position: number, length: number): void {
    const slot = (key & this.slotMask) * slotFields;
    if (length > this.valueBytesMax) {
      this.slots[slot] = 0;
      return;
    }
    this.slots[slot] = position + 1;
    this.slots[slot + 1] = key;
    this.slots[slot + 2] = shard * shardFactor + length;
  }

  /** `shard`/`key` now holds bytes start..end of `source` (one value: append and index). */
  put(shard: number, key: number, source: Uint8Array, start: number, end: number): void {
    const position = end - start > this.valueBytesMax ? -1 : this.append(source, start, end);
    if (position < 0) this.drop(key);
    else this.index(shard, key, position, end - start);
  }

  /** `key` no longer holds what the ring has (a landed delete or ack). Should the slot name another key, that key is only not found. */
  drop(key: number): void {
    this.slots[(key & this.slotMask) * slotFields] = 0;
  }

  /** A copy of `shard`/`key`'s value, or null when the ring does not hold it. */
  copy(shard: number, key: number): Uint8Array | null {
    const slot = this.find(shard, key);
    if (slot < 0) return null;
    const at = this.offsetOf(slot);
    return this.ring.slice(at, at + this.lengthOf(slot));
  }

  /** A view of `shard`/`key`'s value, valid until the next commit lands, or null. */
  viewOf(shard: number, key: number): Uint8Array | null {
    const slot = this.find(shard, key);
    if (slot < 0) return null;
    const at = this.offsetOf(slot);
    return this.ring.subarray(at, at + this.lengthOf(slot));
  }

  /** Whether the ring holds `shard`/`key` (no hit counted). */
  holds(shard: number, key: number): boolean {
    return this.locate(shard, key) >= 0;
  }

  private find(shard: number, key: number): number {
    const slot = this.locate(shard, key);
    if (slot < 0) this.misses++;
    else this.hits++;
    return slot;
  }

  /** The index of `shard`/`key`'s slot in `slots`, or -1 when it names another key or bytes written over since. */
  private locate(shard: number, key: number): number {
    const slots = this.slots;
    const slot = (key & this.slotMask) * slotFields;
    const position = (slots[slot] as number) - 1;
    if (position < 0 || slots[slot + 1] !== key || Math.floor((slots[slot + 2] as number) / shardFactor) !== shard) return -1;
    if (this.written > position + this.ringBytes) return -1;
    return slot;
  }

  private offsetOf(slot: number): number {
    return ((this.slots[slot] as number) - 1) % this.ringBytes;
  }

  private lengthOf(slot: number): number {
    return (this.slots[slot + 2] as number) % shardFactor;
  }
}
