/**
 * The heap-growth governor (src/server/memory-governor.ts), orq's GOGC: under
 * load, JavaScriptCore lets the garbage of the enqueue path (decoded frames,
 * records, promises) pile up to twice the live heap and more before it
 * collects, so a server that has just taken 1,000,000 items held 1.9x
 * beanstalkd's memory until an idle collection. The governor asks for a
 * collection itself whenever the heap has grown by `growthFactor` since the
 * last one. Not configurable: `--idle-gc off` turns it off with the idle one.
 */
export declare const heapGovernor: Readonly<{
    /**
     * Heap capacity, as a multiple of the capacity right after the last
     * collection, that triggers the next (1.25): the heap holds at most about
     * a quarter of its live size in garbage, also when a load ends. Smaller
     * collects more often: each collection blocks the event loop while it
     * marks and sweeps the live heap (65-120 ms at 1,000,000 items on a quiet
     * box, 10-13 of them over a 1,000,000-item load;
     * docs/decisions/006-heap-governor.md).
     */
    growthFactor: 1.25;
    /**
     * While the governor stands aside (the live heap has held steady: a steady
     * load on a large backlog, whose garbage is young and JavaScriptCore's own
     * collections take), the capacity, as a multiple of the capacity right
     * after the last collection, at which it collects anyway (3). (A load or
     * a drain that begins meanwhile moves the live item count, which brings
     * it back to pacing before this.) In 90 s of steady load on a
     * 1,000,000-item backlog JavaScriptCore's own collections kept the
     * capacity below 2.1x (docs/decisions/007-governor-stands-aside.md).
     */
    standAsideCeilingFactor: 3;
    /**
     * The change of the live bytes a collection finds (bun:jsc heapSize()
     * right after it), up or down, that counts as a load or a drain (2%): see
     * `steadyForMs`. Measured as the capacity right after collections that
     * swept (which tracks the live bytes): a steady load on a 1,000,000-item
     * backlog moved it by 0-0.8% per collection, a 1,000,000-item drain by
     * 1-4%, a load by 4-33%. Standing aside, the same
     * change of the live item count since it stood aside brings the governor
     * back to pacing.
     */
    liveChangeMin: 0.02;
    /**
     * How long the live bytes the governor's collections find must stay
     * within `liveChangeMin` of where the stretch began before it stands
     * aside (5 s). A 1,000,000-item load or drain moves it far more in that
     * time (4-33% or 1-4% per collection, several collections a second), while
     * two or three close readings in a row do occur within them: the capacity
     * left after a collection moves by up to a tenth either way with the
     * garbage still in flight. Under a steady load on a large backlog the
     * governor collects about once a second, so it pays about five pauses
     * before standing aside (docs/decisions/007-governor-stands-aside.md).
     */
    steadyForMs: 5000;
    /**
     * How often the heap size is read while requests arrive (100 ms): reading
     * it costs a few microseconds, and a load producing 100 MB of garbage a
     * second overshoots the trigger by at most a tenth of that.
     */
    checkMs: 100;
    /**
     * Below this heap capacity (128 MiB) it does not pace: a server without
     * a large backlog (steady load, nothing accumulating) leaves its
     * collections to JavaScriptCore, whose are mostly concurrent, and takes
     * from the governor only the cadence below; 1,000,000 ready items leave a
     * capacity of 115-145 MiB right after a collection.
     */
    heapBytesMin: number;
    /**
     * Below heapBytesMin, a full collection at most this often while requests
     * arrive (30 s): JavaScriptCore's own collections keep the live heap of a
     * server without a backlog flat, but the blocks it holds between them
     * drifted up by ~16 MiB over an hour's steady load. A full collection of
     * such a heap blocks for about 20 ms (17-25 ms under the soak's load), so
     * 30 s makes that under a tenth of a percent of the main thread
     * (docs/decisions/006-heap-governor.md).
     */
    smallHeapCollectEveryMs: 30000;
}>;
/**
 * The allocator settings `orq serve` runs with (src/cli/allocator-env.ts),
 * each unless the server's environment sets it already. mimalloc reads them
 * once, at process start.
 *
 * MIMALLOC_PURGE_DELAY, 5,000 ms (mimalloc's default is 100): how long a
 * freed page the allocator was not told to return stays resident for reuse.
 * Under a drain or a steady stream of acquisitions the JS heap frees and
 * refills the same pages every fraction of a second; purged after 100 ms,
 * each came back as a page fault after an `madvise` (a TLB shootdown across
 * the process's threads): about a quarter of the server's CPU per drained
 * item and an eighth per Jupiter acquisition. Memory still goes back at
 * every collection that returns pages (the governor's during a load, its
 * ceiling and cadence, the idle collection: `FreedPages` in
 * src/server/memory-governor.ts). Why 5 s and not 60 s: a delay longer
 * than the governor's 30 s cadence keeps every page freed
 * between two of its collections, so a steady load's peaks carry up to half
 * a minute of freed pages and the soak's RSS creeps. 5 s keeps the soak under
 * its bound; its cost, a drain about 13% slower in six alternated runs (within
 * their spread), leaves the drain at 3x beanstalkd's
 * (docs/decisions/001-mimalloc-purge-delay.md).
 */
export declare const allocatorEnv: Readonly<Record<string, string>>;
/**
 * The LMDB map's resident pages (src/storage/lmdb/map-pages.ts), checked on
 * the heap governor's tick: once the process's file-backed resident memory
 * has grown by `growthBytes` (32 MiB) since the last drop, the map's pages
 * are unmapped from the process. They stay in the page cache, so a read of
 * one afterwards is a minor fault (about a microsecond), not I/O. Smaller
 * keeps RSS lower and refaults the hot pages (B-tree branches, the newest
 * records) more often: in the Jupiter scenario, whose reads land all over a
 * 90 MB store, dropping at 64 MiB and never dropping gave the same
 * acquisition rate in two pairs, and 32 MiB halves what a full drain can add
 * to RSS between drops. One drop of 70 MiB took 2 ms.
 */
export declare const mappedPages: Readonly<{
    growthBytes: number;
}>;
/**
 * The ring of recently committed items' delivery parts (enqueue instant,
 * payload, metadata, trace; src/storage/lmdb/recent-values.ts): a delivery
 * of an item committed recently copies them from memory instead of walking
 * LMDB's B-tree, which in priority order lands anywhere in the map (2-3 µs a
 * read on the main thread, a fifth of a Jupiter acquisition). `ringBytes`
 * (32 MiB, `orq serve --recent-values-mb`, 0 turns it off) holds about
 * 280,000 items of 100-byte payloads; its pages count in the server's memory
 * only once written, and a table of 24 bytes per 112 ring bytes (7 MiB)
 * finds them. A ring twice the size held the same Jupiter backlog as whole
 * values, and left the memory target no margin
 * (docs/decisions/044-recent-values.md).
 */
export declare const recentValues: Readonly<{
    ringBytes: number;
    /** Ring bytes per slot of the table that finds an item (112: a 100-byte payload's parts take 120 with their header, so the ring holds fewer items than it has slots). */
    ringBytesPerSlot: 112;
}>;
/** Slots of the table for a ring of `ringBytes`: one per recentValues.ringBytesPerSlot bytes. */
export declare function recentValuesSlots(ringBytes: number): number;
/**
 * The pool of connections' output buffers (src/server/output-buffers.ts). A
 * connection copies a turn's replies into one buffer from the pool and gives
 * it back once written, instead of a fresh frame per reply and a joined
 * buffer per write. `bufferBytes` (64 KiB) holds a turn of a pipelining
 * client's replies (32 deliveries of 1 KiB) without growing; a larger turn
 * takes a larger buffer that is dropped afterwards. `pooledMax` (64) bounds
 * what the pool keeps between turns: 4 MiB, whatever the connection count.
 */
export declare const outputBuffers: Readonly<{
    bufferBytes: number;
    pooledMax: 64;
}>;
/**
 * The pool of write sets' logs (src/storage/write-log.ts). A write set
 * records its writes in a log from the pool and gives it back once its batch
 * is built, instead of an object per write. `pooledWritesMax` (65,536 write
 * slots; seven columns of 8 bytes, about 3.5 MiB) bounds what the pool keeps:
 * enough for the sets of a large commit (65,536 one-write sets, or 655
 * enqueues of 100 items), so a warm server takes every log from the pool,
 * while one exceptional write set does not pin its arrays for the life of
 * the process.
 */
export declare const writeLogs: Readonly<{
    pooledWritesMax: 65536;
}>;
