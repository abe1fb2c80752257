/** Bounds of the retained acked outcomes (engine/outcomes/acked-outcomes.ts, storage/acked-log.ts). */
export declare const ackedOutcomeBounds: Readonly<{
    /**
     * Acked items per in-memory block (16,384): a full block is sorted and
     * stored as runs, a bitmap or plain keys, whichever is smallest (under a
     * byte an item, a fraction of a byte in a drain); a lookup scans the one
     * open block linearly, which at this size costs about 10 microseconds, and
     * the open block's array grows from 256 keys, so an idle namespace holds
     * little. Larger blocks spread the per-block overhead (~200 bytes) thinner.
     */
    blockItemsMax: 16384;
    /**
     * Longest time one block stays open (10 s): a block is forgotten when its
     * newest entry is outcome_retention_ms old, so an acked outcome is kept at
     * least the retention and at most this much longer.
     */
    blockSpanMs: 10000;
    /** Acked-log records deleted per commit (1,000): bounds a purge's share of one commit; the rest go with the next. */
    purgeRecordsPerCommitMax: 1000;
    /**
     * Size at which the LMDB store stops rewriting its open acked-log record
     * and starts another (1,536 bytes): each commit that acks rewrites the open
     * record, so this bounds that rewrite, and it keeps the record inside one
     * 4 KiB LMDB page (no overflow pages). A record also closes once it has been
     * open blockSpanMs, which bounds how much longer than the retention its
     * first keys are kept.
     */
    logRecordBytesMax: 1536;
}>;
/**
 * The LMDB store's deferred deletes of acked records (storage/lmdb/ack-sweep.ts,
 * docs/STORAGE.md "Acked records are swept").
 */
export declare const ackSweepBounds: Readonly<{
    /**
     * Acked records that may wait for the live items below them in their shard
     * (1,048,576): beyond these, every commit deletes the lowest anyway. 16
     * bytes a key in memory (16 MiB at most), about 250 bytes a record on disk
     * (already written: waiting adds nothing); a restart skips and deletes
     * them. A priority queue acks all over the key space: a record deleted
     * while most of its page is still live rewrites that page for one record,
     * so the bound is sized to hold a million-item random-priority backlog's
     * acks until the pages empty (docs/decisions/004-ack-sweep.md).
     * Dead letters holding a floor cannot pile up more than this.
     */
    lagKeys: 1048576;
    /**
     * Records one commit deletes at most (8,192): a floor that jumps (the last
     * old item of a shard ends) frees up to lagKeys at once, and the deletes
     * run inside the write transaction on the main thread. The rest go in the
     * next commits, or in a sweep of their own once commits stop.
     */
    keysPerCommitMax: 8192;
    /**
     * How long the store waits with no commit before it sweeps on its own
     * (50 ms), while records below their floors still wait: after a drain no
     * commit comes to carry them.
     */
    idleSweepMs: 50;
}>;
/** Write sets waiting for a commit (100,000): beyond it the disk cannot keep up and new writes are refused (UNAVAILABLE). */
export declare const pendingWriteSetsMax = 100000;
/**
 * The delivery prefetch (engine/ready/delivery-prefetch.ts): the store reads in, on
 * a worker thread, the next items of each ready heap deliveries take from,
 * asking again as deliveries use up what it asked for.
 */
export declare const deliveryPrefetch: Readonly<{
    /**
     * Keys asked for per heap at a time (32): a drain's dequeue of 100 over 16
     * shard heaps takes about 6 from each, so one ask covers several dequeues,
     * and the request's own cost (a few µs of lmdb-js work a call) is spread
     * over a few dozen deliveries.
     */
    keysPerHeapMax: 32;
    /** A heap is asked for again once fewer than this many (8) of the items asked for are left untaken. */
    refillBelowKeys: 8;
    /**
     * Dequeues asking for fewer items than this (8) take no part: in one
     * process a dequeue of 1 with capabilities took 7.0 µs (median) without the
     * prefetch and 14.5 with it (bench/micro/acquisition-path.bench.ts).
     */
    dequeueCountMin: 8;
    /** Heaps one dequeue asks for at most (64): a dequeue over many topics or groups asks for the first 64. */
    heapsPerDequeueMax: 64;
}>;
/**
 * When a ready heap (engine/ready/ready-heap.ts) keeps its items in priority
 * levels: from `fromItems` (4,096) items on, back to one heap below
 * `flatBelowItems` (1,024; the gap keeps a heap at the edge from switching
 * on every item). A heap of a few thousand items stays in cache as one; the
 * levels pay off where a heap's items no longer fit there
 * (docs/decisions/027-priority-levels.md).
 */
export declare const readyHeapLevels: Readonly<{
    fromItems: 4096;
    flatBelowItems: 1024;
}>;
/**
 * A ready heap's front (engine/ready/ready-heap.ts): when a removal empties
 * it, the next `items` (32) are popped from the heap back to back and held in
 * order; an insert that joins it may grow it to twice that before its last
 * item goes back. Popped together, each pop finds the nodes the last one
 * touched in cache (docs/decisions/037-ready-front.md).
 */
export declare const readyFront: Readonly<{
    items: 32;
}>;
