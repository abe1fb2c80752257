/** Bounds of the retained acked outcomes (engine/acked-outcomes.ts, storage/acked-log.ts). */
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
     * (262,144): beyond these, every commit deletes the lowest anyway. 16 bytes
     * a key in memory (4 MiB at most), about 250 bytes a record on disk; a
     * restart skips and deletes them. Large enough for a priority queue's acks
     * to wait for their page's last item (fewer page rewrites), small enough
     * that dead letters holding floors cannot pile up ended records.
     */
    lagKeys: 262144;
}>;
/** Write sets waiting for a commit (100,000): beyond it the disk cannot keep up and new writes are refused (UNAVAILABLE). */
export declare const pendingWriteSetsMax = 100000;
