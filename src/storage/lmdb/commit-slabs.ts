// The buffer an LMDB commit encodes its values into (the slab, written to
// LMDB as views of it) and its list of item writes, both kept from one commit
// to the next. A fresh buffer per commit was the largest allocation of the
// enqueue path: about 250 MiB per 1,000,000 enqueued items, short-lived and
// outside the JS heap, which the allocator held on to after the load. One
// commit is in its transaction at a time (GroupCommitter); should another
// start meanwhile, it gets fresh ones. Values go to LMDB as ranges of the
// slab (slabRange), not as a view per value.

import { assert } from "../../lib/assert.ts";
import { ByteWriter } from "../byte-cursor.ts";

/** A Uint8Array whose `start` and `end` name the part of it to write (lmdb-js's write.js reads them, as it does msgpackr's reused buffers). */
interface RangedBytes extends Uint8Array {
  start: number;
  end: number;
}

/**
 * Bytes start..end of what `slab` holds, in the form lmdb-js writes a value
 * from without a view of it: the slab's own buffer with `start` and `end`
 * set. A subarray per value would be one JS-heap cell per put
 * (docs/decisions/017-patched-writes.md). lmdb-js reads the value during
 * put() inside the write transaction, so the next range may reuse the buffer
 * at once; it caches the buffer's address on it, which stays right because
 * the buffer never moves (a grown slab is a new buffer).
 */
export function slabRange(slab: ByteWriter, start: number, end: number): Uint8Array {
  assert(start >= 0 && start <= end && end <= slab.length, "commit slab: range outside what was written");
  const bytes = slab.buffer() as RangedBytes;
  bytes.start = start;
  bytes.end = end;
  return bytes;
}

/** The kept buffer's first size (64 KiB): a few hundred writes; it grows by doubling. */
const slabBytesInitial = 64 * 1024;
/**
 * A buffer grown past this (16 MiB, about 80,000 writes of 100-byte items)
 * is dropped after its commit instead of kept: one exceptional commit does
 * not pin its buffer for the life of the process.
 */
const slabKeptBytesMax = 16 * 1024 * 1024;
/** A kept buffer more than this many times larger than its last commit needed (16) is replaced by a smaller one. */
const slabShrinkRatio = 16;

export class CommitSlabs {
  private slab = new ByteWriter(slabBytesInitial);
  /** Item writes as four numbers each (shard, key, start, end; start -1 for a delete): no object per write. */
  private readonly itemWrites: number[] = [];
  /** A commit holds the kept buffer and list, from its encoding to the end of its transaction. */
  private busy = false;

  /** The buffer for the next commit: the kept one, emptied, unless a commit still holds it. */
  take(bytes: number): ByteWriter {
    if (this.busy) return new ByteWriter(bytes);
    this.busy = true;
    this.slab.reset();
    return this.slab;
  }

  /** The item-write list that goes with `slab`, empty. */
  itemWritesFor(slab: ByteWriter): number[] {
    if (slab !== this.slab) return [];
    this.itemWrites.length = 0;
    return this.itemWrites;
  }

  /**
   * The commit that took `slab` is over (committed, failed, or its encoding
   * threw). A buffer much larger than this commit needed (16x) is traded for
   * a smaller one, so a burst's buffer does not stay with a server whose
   * load has become light.
   */
  release(slab: ByteWriter): void {
    if (slab !== this.slab) return;
    this.busy = false;
    const usedBytes = slab.length;
    if (slab.capacity > slabKeptBytesMax || (slab.capacity > slabBytesInitial && usedBytes * slabShrinkRatio < slab.capacity)) {
      this.slab = new ByteWriter(Math.max(slabBytesInitial, usedBytes * 2));
    }
  }
}
