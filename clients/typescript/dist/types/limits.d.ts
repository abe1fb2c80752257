export * from "./limits/cluster.ts";
export * from "./limits/dashboard.ts";
export * from "./limits/matching.ts";
export * from "./limits/memory.ts";
export * from "./limits/storage.ts";
export interface Limits {
    /** Largest frame body accepted (4 MiB): a full 1,000-item batch of 4 KiB payloads fits. Configurable. */
    frameBytesMax: number;
    /** Largest item payload (10 KiB, per the contract): bigger bodies belong in a blob store. Configurable. */
    payloadBytesMax: number;
    /** Largest item metadata (1 KiB, per the contract): metadata is rewritten on every nack. Configurable. */
    metadataBytesMax: number;
    /**
     * Largest `ack` result (64 KiB, per the contract): it is kept in memory and
     * on disk with the acked outcome for outcome_retention_ms, so a bigger
     * answer belongs in a blob store. Configurable.
     */
    resultBytesMax: number;
    /** Items in one enqueue (1,000, per the contract): one batch stays one small LMDB commit. */
    itemsPerEnqueueMax: number;
    /** Items one dequeue may ask for per topic (1,000, per the contract). */
    countPerDequeueMax: number;
    /** Topic name length in UTF-8 bytes (255, per the contract). */
    topicBytesMax: number;
    /** Namespace name length in UTF-8 bytes (255): names are keys in memory and on disk. */
    namespaceBytesMax: number;
    /** Idempotency key length in UTF-8 bytes (255, per the contract). */
    keyBytesMax: number;
    /** One item id in get, cancel, redrive or `after` (255 bytes, per the contract): ids orq makes are at most 33. */
    idBytesMax: number;
    /** One receipt in ack, nack or extend (255 bytes, per the contract): receipts orq makes are at most 67. */
    receiptBytesMax: number;
    /** Longest `hello` token (4 KiB): anything longer cannot be a configured token. */
    tokenBytesMax: number;
    /** Longest long-poll (5 minutes): longer waits outlive most load balancers' idle timeouts. */
    waitMsMax: number;
    /** Longest lease (12 hours): a worker that needs longer should extend. */
    leaseMsMax: number;
    /** Receipts, ids or items in one ack/nack/extend/cancel/get/redrive (1,000, per the contract). */
    idsPerRequestMax: number;
    /** Longest delay or TTL, and furthest deliver_at_ms from now (1 year): beyond it a timestamp is more likely a unit bug. */
    delayMsMax: number;
    /** Topics one dequeue may list (100): each costs a merge over that topic's heaps. */
    topicsPerDequeueMax: number;
    /** Entries in an `after` list (100): each is a dependency edge kept in memory. */
    afterIdsMax: number;
    /** Features in a `requires` or `capabilities` map (64), and values in one set or `in`/`all` list (256). */
    featuresMax: number;
    valuesPerFeatureMax: number;
    /** Nesting depth of any decoded request value (32): deeper values are abuse, not data. */
    decodeDepthMax: number;
    /** Dequeues parked in long-poll per connection (1,000) and in total (100,000): each holds memory until it times out. */
    waitersPerConnectionMax: number;
    waitersTotalMax: number;
    /**
     * `wait` requests parked per connection (1,000) and in total (100,000):
     * each holds its id list and one index entry per id until it is answered.
     */
    itemWaitsPerConnectionMax: number;
    itemWaitsTotalMax: number;
    /** Requests started but not yet answered on one connection (10,000): bounds the work one pipelining client can queue. */
    inflightPerConnectionMax: number;
    /** Unsent reply bytes per connection (8 MiB): above it the server stops reading from that client until it drains. */
    outputBytesPerConnectionMax: number;
    /** Open client connections (10,000): each holds buffers; beyond it new connections are closed at once. */
    connectionsMax: number;
    /** Topics listed per `topics` page (1,000 default and maximum) and items per `dead` page (1,000). */
    topicsPageMax: number;
    deadPageMax: number;
    /** Items per `list` page when the request gives no limit (100, per the contract). */
    listPageDefault: number;
    /** Items per `list` page at most (1,000, per the contract): a larger limit is TOO_LARGE. */
    listPageMax: number;
    /**
     * Item-table slots one `list` page may visit while it walks a topic's
     * non-ready items in enqueue order (200,000, about 2 ms measured among 2M
     * items: bench/micro/list.bench.ts). The walk covers every topic's items,
     * so for a small topic in a large store a page may stop short with `next`
     * set.
     */
    listScanSlotsMax: number;
    /**
     * Ready items before the cursor a `list` page walks in the ready heaps
     * (10,000, a few ms: the walk measured about 0.5 µs per item, the pass
     * over the item table about 50 ns per stored item) before it finds the page
     * by one pass over the item table instead (engine/reads/list-ready.ts): deep
     * pages in a big topic then cost a pass over the store, not a walk of every
     * item before them.
     */
    listReadyVisitsMax: number;
    /** Dead letters one `redrive` without ids moves (10,000): keeps one reply's WriteSet small; call again for the rest. */
    redriveAllMax: number;
    /** Topics and groups paused at once, per server (100,000): a pause keeps even an empty topic or group in memory and on disk. */
    pausedTopicsMax: number;
    /** Bytes of an item's `group` name (255, as topics and keys). */
    groupBytesMax: number;
    /** Policies stored, per server (1,000,000): each is a record in memory and on disk; a "*" policy covers any number of groups. */
    policiesMax: number;
    /** The largest policy `weight` (10,000, the contract's range): a group's share against a weight-1 group. */
    policyWeightMax: number;
    /** Bytes of an item's `trace` context (512, the contract's bound: a W3C traceparent and a short tracestate). */
    traceBytesMax: number;
    /** Entries one `groups` or `policies` page holds at most (1,000, the contract's default). */
    groupsPageMax: number;
    /** Items `explain` counts ahead of an item before it stops (1,000, the contract's "counted up to 1000"). */
    explainAheadMax: number;
    /**
     * Live items the server holds, every state and dead letters included
     * (50,000,000). Configurable. A ready item costs about 136 B of heap
     * (bench/item-heap.bench.ts; 200 MiB of anonymous memory per million in
     * that bench), so about 10 GiB with the collector's headroom: under half a
     * 24 GiB machine, 50x the load bench's 1,000,000. Past it enqueue is
     * TOO_LARGE; a store over it (a lowered setting) still loads.
     */
    liveItemsMax: number;
    /**
     * Live topics over all namespaces (1,000,000). Configurable. A topic costs
     * about 2.7 KiB of heap with its heaps and maps (measured: 100,000 topics
     * of one item each, less the items), so 2.7 GiB: far past any fleet's
     * topic count, but a bound on a client that makes a topic per item.
     */
    topicsMax: number;
    /**
     * Namespaces known since start (100,000). Configurable. A namespace keeps
     * its counters until a restart even when empty: about 0.5 KiB more than
     * its topics (measured like topics), so 50 MiB; namespaces are tenants.
     */
    namespacesMax: number;
    /** Longest timed pause (1 year, like delayMsMax): beyond it a `for_ms` is more likely a unit bug. */
    pauseMsMax: number;
    /** How long an ended item's outcome is kept for `get` and `after` (1 hour, per the contract). Configurable. */
    outcomeRetentionMs: number;
    /** Most due deadlines (delays, leases, TTLs, waiter timeouts) handled per timer tick (10,000): keeps one tick short. */
    deadlinesPerTickMax: number;
    /**
     * Records recovered between two turns of the event loop at start-up (10,000,
     * about 10 ms of work): /healthz answers and progress is logged during a
     * recovery of millions of items, at a cost of one turn per step.
     */
    recoveryRecordsPerTurnMax: number;
    /**
     * How long a worker's dequeue of a topic counts as a recent ask for the
     * unmatchable-items report in `stats` (10 minutes): longer than waitMsMax,
     * so a worker parked in a long-poll counts as asking for its whole wait.
     */
    unmatchableAskWindowMs: number;
    /** Largest job body on the beanstalkd port (65,535 bytes, beanstalkd's default for -z). Configurable. */
    beanstalkJobBytesMax: number;
    /** Longest beanstalkd command line, CRLF included (224 bytes, beanstalkd's LINE_BUF_SIZE): a longer line is BAD_FORMAT. */
    beanstalkLineBytesMax: number;
    /** Longest tube name (200 bytes, beanstalkd's MAX_TUBE_NAME_LEN - 1). */
    beanstalkTubeBytesMax: number;
    /**
     * Commands one beanstalkd connection may have parsed but not yet answered
     * (1,000): beanstalkd answers in order, one at a time, so a client that
     * pipelines more waits; the socket stops being read until the queue falls.
     */
    beanstalkQueuedCommandsMax: number;
    /**
     * Jobs whose beanstalkd-only counters (releases, buries, kicks, timeouts,
     * last delay: stats-job) the port keeps in memory (100,000): past it the
     * oldest entry is dropped and that job shows zeros.
     */
    beanstalkJobCountersMax: number;
}
export declare const defaultLimits: Readonly<Limits>;
/** Item defaults from the contract's item table. */
export declare const itemDefaults: Readonly<{
    leaseMs: 30000;
    maxAttempts: 10;
    priority: 0;
}>;
/**
 * How long an at_least_once lease may wait before it is written (250 ms).
 * The delivery is sent at once either way (at-least-once allows a crash to
 * forget a lease: the item is delivered again, under a receipt of the new
 * boot); waiting lets an ack, nack or expiry that comes within the window
 * replace the lease write instead of following it, which saves one LMDB
 * write per item, and in a priority queue a write lands on a page of its own.
 * A pipelined consumer's round trip under load (deliveries queued behind
 * 32 requests of 100) is 20-100 ms, so the window is sized past it; a crash
 * forgets at most this much of the leases granted, and the waiting leases
 * keep a copy of their stored value (about 200 bytes each)
 * (docs/decisions/002-deferred-lease-writes.md). At_most_once leases are
 * written before their delivery is sent.
 */
export declare const leaseWriteDelayMs = 250;
/**
 * The deferred lease writes come due together: when the oldest waiting lease
 * is leaseWriteDelayMs old, every lease granted within this much (25 ms)
 * after it is written in the same commit, and the younger ones wait for
 * their own turn. So each lease waits 225-250 ms, and one commit carries a
 * tenth of the window's writes rather than one timer's worth each
 * (engine/time/deferred-lease-writes.ts).
 */
export declare const leaseWriteBatchMs = 25;
/** Shards a data dir may be created with (1,024): every topic keeps a ready heap per shard it has items on. */
export declare const shardsMax = 1024;
/**
 * Room a frame keeps beside one item's payload and metadata (1 KiB): the
 * request's or delivery's other fields and map headers. A configuration whose
 * frame cannot hold the largest item and this is refused.
 */
export declare const itemEnvelopeBytes = 1024;
/**
 * The longest id and receipt orq makes: `<shard>:<key>` and
 * `<shard>:<key>:<deliveries>:<boot>`, each number below 2^53 (16 digits).
 */
export declare const idBytesLongest: number;
export declare const receiptBytesLongest: number;
/**
 * Delivery counts whose receipt tail (`:<deliveries>:<boot>`) is built once
 * per boot and kept (64): a receipt is then its id and one kept string, one
 * JS-heap cell instead of three (engine/state/ids.ts). Items are rarely delivered
 * 64 times; past that the receipt is built whole.
 */
export declare const receiptTailsCachedMax = 64;
/**
 * Distinct (leaseMs, maxAttempts, delivery) combinations an engine keeps one
 * shared settings object for (256; engine/state/item-parts.ts). Clients use a
 * handful; the combinations come from client input, so past this a new one
 * gets an object per item instead of growing the table without end.
 */
export declare const itemSettingsSharedMax = 256;
/** How long a connection that must close (either port) may wait for its last frames or answers to leave (5 s). */
export declare const closeFlushMsMax = 5000;
/** Topics exported per state in /metrics (1,000): 1,000 x 5 states = 5,000 series, a large but still cheap scrape; the rest are summed. */
export declare const metricsTopicSeriesMax = 1000;
/**
 * The relations between limits that the code relies on, as one message per
 * broken one (none: an empty list). Checked for the defaults when this module
 * loads and for every configuration `orq serve` builds (cli/config.ts).
 */
export declare function limitRelationProblems(limits: Readonly<Limits>): string[];
/** Throws, naming every broken relation, unless `limits` keep them all. */
export declare function checkLimitRelations(limits: Readonly<Limits>): void;
