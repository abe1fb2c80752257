// What a delivery reads of the items committed most recently, kept in memory
// so that delivering one of them does not walk LMDB's B-tree
// (docs/decisions/044-recent-values.md). In priority order a delivery's read
// lands anywhere in the map: 2-3 µs a read on the main thread, a fifth of a
// Jupiter acquisition, most of it the page search and the fault of a page
// the map dropped. An item is usually delivered soon after it was written, so
// the newest items are the ones asked for.
//
// Only a delivery's parts are kept (enqueue instant, payload, metadata,
// trace: item-record.ts's DeliveryParts), about 120 bytes for a 100-byte
// payload against 190-215 for the whole value: the ring holds nearly twice as
// many items for its memory. Reads of the whole value (a lease write's patch,
// `get`) go to LMDB.
//
// A ring of bytes and a table of slots, both allocated once. Each landed
// put's parts are appended to the ring behind a 20-byte header (enqueue
// instant, the three lengths), and its key's slot (keys are one sequence for
// the whole store, writer.nextKey, so consecutive keys take consecutive
// slots) records where, with the key, shard and record length. Old records
// are never evicted one by one: the ring writes over them, and a slot is
// trusted only while the bytes it names have not been written over since
// (positions count every byte ever written) and it names the key asked for.
// A key whose slot a later key took is simply not found: the reader falls
// back to LMDB.
//
// It holds what LMDB holds as the engine knows it: it is written only after a
// commit has landed (puts replace, deletes and acks drop), and a failed commit
// changed nothing in either. Pages of the ring are touched only as it fills:
// a server that has written less than the ring holds less.

import { decodeTrace, type DeliveryParts, type ItemValueBytes, noBytes } from "../item-record.ts";

/** Numbers per slot: ring position + 1 (0 for none), key, shard * 2^32 + record length. */
const slotFields = 3;
const shardFactor = 2 ** 32;
/** Before each record's parts: enqueue instant (f64), payload, metadata and trace lengths (u32 each; trace 0xffffffff for none). */
const headerBytes = 20;
const noTrace = 0xffff_ffff;

export class RecentValues {
  private readonly ring: Uint8Array;
  private readonly view: DataView;
  private readonly slots: Float64Array;
  private readonly slotCount: number;
  /** Bytes ever written, skipped tails included: a record at p is intact while written <= p + ringBytes. */
  private written = 0;
  /** Largest record kept (a sixteenth of the ring): one large item does not flush the ring. */
  private readonly recordBytesMax: number;
  /** Reads answered from the ring, and reads it could not answer (metrics). */
  hits = 0;
  misses = 0;

  /** `ringBytes` at least 1 KiB; `slotCount` at least 1. */
  constructor(
    readonly ringBytes: number,
    slotCount: number,
  ) {
    if (!Number.isSafeInteger(ringBytes) || ringBytes < 1024) throw new RangeError(`recent values: ring of ${ringBytes} bytes (at least 1024)`);
    if (!Number.isSafeInteger(slotCount) || slotCount < 1) throw new RangeError(`recent values: ${slotCount} slots (at least 1)`);
    this.ring = new Uint8Array(ringBytes);
    this.view = new DataView(this.ring.buffer);
    this.slots = new Float64Array(slotCount * slotFields);
    this.slotCount = slotCount;
    this.recordBytesMax = Math.floor(ringBytes / 16);
  }

  /** Bytes of the ring written so far, up to its size: what it adds to the process's memory. */
  get residentBytes(): number {
    return Math.min(this.written, this.ringBytes);
  }

  /** `shard`/`key` now holds `value`, whose delivery parts `parts` locates (a landed commit's put). */
  put(shard: number, key: number, value: Uint8Array, parts: DeliveryParts): void {
    const traceLength = parts.traceLength < 0 ? 0 : parts.traceLength;
    const length = headerBytes + parts.payloadLength + parts.metadataLength + traceLength;
    if (length > this.recordBytesMax) {
      this.drop(key);
      return;
    }
    let at = this.written % this.ringBytes;
    if (at + length > this.ringBytes) {
      // Records never wrap: the tail is skipped (and counts as written, so what it held is no longer trusted).
      this.written += this.ringBytes - at;
      at = 0;
    }
    const view = this.view;
    view.setFloat64(at, parts.enqueuedAtMs);
    view.setUint32(at + 8, parts.payloadLength);
    view.setUint32(at + 12, parts.metadataLength);
    view.setUint32(at + 16, parts.traceLength < 0 ? noTrace : parts.traceLength);
    let to = at + headerBytes;
    to = this.copyIn(value, parts.payloadAt, parts.payloadLength, to);
    to = this.copyIn(value, parts.metadataAt, parts.metadataLength, to);
    this.copyIn(value, parts.traceAt, traceLength, to);
    const slot = (key % this.slotCount) * slotFields;
    this.slots[slot] = this.written + 1;
    this.slots[slot + 1] = key;
    this.slots[slot + 2] = shard * shardFactor + length;
    this.written += (length + 7) & ~7;
  }

  /** `key` no longer holds what the ring has (a landed delete or ack). Should the slot name another key, that key is only not found. */
  drop(key: number): void {
    this.slots[(key % this.slotCount) * slotFields] = 0;
  }

  /** Fill `into` with `shard`/`key`'s delivery parts (payload and metadata copies the caller owns); false when the ring does not hold it. */
  readDelivery(shard: number, key: number, into: ItemValueBytes): boolean {
    const slot = this.locate(shard, key);
    if (slot < 0) {
      this.misses++;
      return false;
    }
    this.hits++;
    const at = ((this.slots[slot] as number) - 1) % this.ringBytes;
    const view = this.view;
    const payloadLength = view.getUint32(at + 8);
    const metadataLength = view.getUint32(at + 12);
    const traceLength = view.getUint32(at + 16);
    const payloadAt = at + headerBytes;
    const metadataAt = payloadAt + payloadLength;
    into.enqueuedAtMs = view.getFloat64(at);
    into.payload = payloadLength === 0 ? noBytes : this.ring.slice(payloadAt, metadataAt);
    into.metadata = metadataLength === 0 ? noBytes : this.ring.slice(metadataAt, metadataAt + metadataLength);
    into.trace = traceLength === noTrace ? null : decodeTrace(this.ring, metadataAt + metadataLength, traceLength);
    return true;
  }

  /** Whether the ring holds `shard`/`key` (no hit counted). */
  holds(shard: number, key: number): boolean {
    return this.locate(shard, key) >= 0;
  }

  private copyIn(source: Uint8Array, from: number, length: number, to: number): number {
    if (length > 0) this.ring.set(source.subarray(from, from + length), to);
    return to + length;
  }

  /** The index of `shard`/`key`'s slot in `slots`, or -1 when it names another key or bytes written over since. */
  private locate(shard: number, key: number): number {
    const slots = this.slots;
    const slot = (key % this.slotCount) * slotFields;
    const position = (slots[slot] as number) - 1;
    if (position < 0 || slots[slot + 1] !== key || Math.floor((slots[slot + 2] as number) / shardFactor) !== shard) return -1;
    if (this.written > position + this.ringBytes) return -1;
    return slot;
  }
}
