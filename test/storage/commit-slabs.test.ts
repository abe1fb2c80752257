// Goal: the LMDB store's commit buffer is reused only when no commit holds it
// (a second commit in flight gets a fresh buffer and list, so no commit's
// values are overwritten while its transaction reads them), comes back empty,
// and is traded for a smaller one after a commit that needed far less of it;
// slabRange names a written range the way lmdb-js reads it (start/end on the
// buffer itself) and refuses one outside what was written. That LMDB stores
// exactly the range is checked by the store suite's round trips.

import { describe, expect, test } from "bun:test";
import { CommitSlabs, slabRange } from "../../src/storage/lmdb/commit-slabs.ts";

describe("CommitSlabs", () => {
  test("the kept buffer and write list serve one commit at a time, emptied", () => {
    const slabs = new CommitSlabs();
    const first = slabs.take(1024);
    first.raw(new Uint8Array([1, 2, 3]));
    const writes = slabs.itemWritesFor(first);
    writes.push(0, 1, 0, 3);
    // A second commit while the first is in its transaction: its own buffer and list.
    const second = slabs.take(1024);
    expect(second).not.toBe(first);
    expect(slabs.itemWritesFor(second)).not.toBe(writes);
    expect(first.written(0, 3)).toEqual(new Uint8Array([1, 2, 3]));
    slabs.release(second);
    // Releasing the other commit's buffer does not free the kept one.
    expect(slabs.take(1024)).not.toBe(first);
    slabs.release(first);
    const again = slabs.take(1024);
    expect(again).toBe(first);
    expect(again.length).toBe(0);
    expect(slabs.itemWritesFor(again)).toEqual([]);
  });

  test("a buffer that grew for a large commit is kept for commits of its size and traded after a much smaller one", () => {
    const slabs = new CommitSlabs();
    const large = slabs.take(0);
    large.raw(new Uint8Array(1024 * 1024));
    const grownBytes = large.capacity;
    slabs.release(large);
    const next = slabs.take(0);
    expect(next).toBe(large);
    next.raw(new Uint8Array(512 * 1024));
    slabs.release(next);
    const small = slabs.take(0);
    expect(small).toBe(large);
    small.raw(new Uint8Array(100));
    slabs.release(small);
    const after = slabs.take(0);
    expect(after).not.toBe(large);
    expect(after.capacity).toBeLessThan(grownBytes);
  });

  test("slabRange is the slab's own buffer with start and end set to the range, and only inside what was written", () => {
    const slabs = new CommitSlabs();
    const slab = slabs.take(64);
    slab.raw(new Uint8Array([5, 6, 7, 8, 9]));
    const first = slabRange(slab, 1, 3) as Uint8Array & { start: number; end: number };
    expect([first.start, first.end]).toEqual([1, 3]);
    expect(first.subarray(first.start, first.end)).toEqual(new Uint8Array([6, 7]));
    const second = slabRange(slab, 3, 5) as Uint8Array & { start: number; end: number };
    expect(second).toBe(first); // no object per value
    expect(second.subarray(second.start, second.end)).toEqual(new Uint8Array([8, 9]));
    expect(() => slabRange(slab, 4, 6)).toThrow();
    expect(() => slabRange(slab, 3, 2)).toThrow();
  });
});
