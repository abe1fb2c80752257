// Every bound orq enforces, in one place, with its unit and the reason for its
// value. Values marked "configurable" are defaults that `orq serve` flags or the
// config file may change; the server reports the ones in force in `hello.limits`.

export interface Limits {
  /** Largest frame body accepted (4 MiB): a full 1,000-item batch of 4 KiB payloads fits. Configurable. */
  frameBytesMax: number;
  /** Largest item payload (10 KiB, per the contract): bigger bodies belong in a blob store. Configurable. */
  payloadBytesMax: number;
  /** Largest item metadata (1 KiB, per the contract): metadata is rewritten on every nack. Configurable. */
  metadataBytesMax: number;
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
   * items: BENCHMARKS.md, "list"). The walk covers every topic's items, so for a
   * small topic in a large store a page may stop short with `next` set.
   */
  listScanSlotsMax: number;
  /**
   * Ready items before the cursor a `list` page walks in the ready heaps
   * (10,000, a few ms: the walk measured about 0.5 µs per item, the pass
   * over the item table about 50 ns per stored item) before it finds the page
   * by one pass over the item table instead (engine/list-ready.ts): deep
   * pages in a big topic then cost a pass over the store, not a walk of every
   * item before them.
   */
  listReadyVisitsMax: number;
  /** Topics paused at once, per server (100,000): a pause keeps even an empty topic in memory and on disk. */
  pausedTopicsMax: number;
  /**
   * Live items the server holds, every state and dead letters included
   * (50,000,000). Configurable. Each costs about 192 B of memory at rest
   * (BENCHMARKS.md, "Memory"; 250-550 MiB per million measured idle to under
   * load), so the default is 10-25 GiB, the most a 24 GiB machine holds: 50x
   * the 1,000,000-item load bench. Past it enqueue is TOO_LARGE; a store
   * over it (a lowered setting) still loads.
   */
  liveItemsMax: number;
  /**
   * Live topics over all namespaces (1,000,000). Configurable. A topic costs
   * about 1 KiB with its heaps and maps (measured, docs/OPERATIONS.md), so
   * 1 GiB: far past any fleet, but bounds a client that makes a topic per item.
   */
  topicsMax: number;
  /**
   * Namespaces known since start (100,000). Configurable. A namespace keeps
   * its counters until a restart even when empty (about 1 KiB with its maps,
   * measured), so 100 MiB: namespaces are tenants, and 100,000 is abuse.
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

export const defaultLimits: Readonly<Limits> = Object.freeze({
  frameBytesMax: 4 * 1024 * 1024,
  payloadBytesMax: 10 * 1024,
  metadataBytesMax: 1024,
  itemsPerEnqueueMax: 1000,
  countPerDequeueMax: 1000,
  topicBytesMax: 255,
  namespaceBytesMax: 255,
  keyBytesMax: 255,
  waitMsMax: 5 * 60 * 1000,
  leaseMsMax: 12 * 60 * 60 * 1000,
  idsPerRequestMax: 1000,
  delayMsMax: 365 * 24 * 60 * 60 * 1000,
  topicsPerDequeueMax: 100,
  afterIdsMax: 100,
  featuresMax: 64,
  valuesPerFeatureMax: 256,
  decodeDepthMax: 32,
  waitersPerConnectionMax: 1000,
  waitersTotalMax: 100_000,
  inflightPerConnectionMax: 10_000,
  outputBytesPerConnectionMax: 8 * 1024 * 1024,
  connectionsMax: 10_000,
  topicsPageMax: 1000,
  deadPageMax: 1000,
  listPageDefault: 100,
  listPageMax: 1000,
  listScanSlotsMax: 200_000,
  listReadyVisitsMax: 10_000,
  pausedTopicsMax: 100_000,
  liveItemsMax: 50_000_000,
  topicsMax: 1_000_000,
  namespacesMax: 100_000,
  pauseMsMax: 365 * 24 * 60 * 60 * 1000,
  outcomeRetentionMs: 60 * 60 * 1000,
  deadlinesPerTickMax: 10_000,
  recoveryRecordsPerTurnMax: 10_000,
  unmatchableAskWindowMs: 10 * 60 * 1000,
  beanstalkJobBytesMax: 65_535,
  beanstalkLineBytesMax: 224,
  beanstalkTubeBytesMax: 200,
  beanstalkQueuedCommandsMax: 1000,
  beanstalkJobCountersMax: 100_000,
});

/** Item defaults from the contract's item table. */
export const itemDefaults = Object.freeze({
  leaseMs: 30_000,
  maxAttempts: 10,
  priority: 0,
});

/**
 * How long an at_least_once lease may wait before it is written (20 ms).
 * The delivery is sent at once either way (at-least-once allows a crash to
 * forget a lease: the item is delivered again, under a receipt of the new
 * boot); waiting lets an ack, nack or expiry that comes within the window
 * replace the lease write instead of following it, which in a drain saves
 * one LMDB write and one read per item. A short job's whole life fits in it;
 * a crash forgets at most this much of the leases granted. At_most_once
 * leases are written before their delivery is sent, as before.
 */
export const leaseWriteDelayMs = 20;

/**
 * The heap-growth governor (src/server/memory-governor.ts), orq's GOGC: under
 * load, JavaScriptCore lets the garbage of the enqueue path (decoded frames,
 * records, promises) pile up to twice the live heap and more before it
 * collects, so a server that has just taken 1,000,000 items held 1.9x
 * beanstalkd's memory until an idle collection. The governor asks for a
 * collection itself whenever the heap has grown by `growthFactor` since the
 * last one. Not configurable: `--idle-gc off` turns it off with the idle one.
 */
export const heapGovernor = Object.freeze({
  /**
   * Heap size, as a multiple of its size after the last collection, that
   * triggers the next (1.25): the heap holds at most a quarter of its live
   * size in garbage, also when a load ends (with 1.5, up to half). Smaller
   * collects more often: each collection blocks the event loop while it
   * marks the live heap (about 100 ms at 1,000,000 items on a quiet box);
   * against 1.5, about 6% more server CPU per enqueued item (OPERATIONS.md).
   */
  growthFactor: 1.25,
  /**
   * How often the heap size is read while requests arrive (100 ms): reading
   * it costs a few microseconds, and a load producing 100 MB of garbage a
   * second overshoots the trigger by at most a tenth of that.
   */
  checkMs: 100,
  /**
   * Below this heap size (128 MiB) it never collects: a server without a
   * large backlog (steady load, nothing accumulating) leaves its collections
   * to JavaScriptCore, whose are mostly concurrent, and takes no pause from
   * the governor; 1,000,000 ready items make a heap of 140-220 MiB.
   */
  heapBytesMin: 128 * 1024 * 1024,
});


/** Bounds of the retained acked outcomes (engine/acked-outcomes.ts, storage/acked-log.ts). */
export const ackedOutcomeBounds = Object.freeze({
  /**
   * Acked items per in-memory block (16,384): a full block is sorted and
   * stored as runs, a bitmap or plain keys, whichever is smallest (under a
   * byte an item, a fraction of a byte in a drain); a lookup scans the one
   * open block linearly, which at this size costs about 10 microseconds, and
   * the open block's array grows from 256 keys, so an idle namespace holds
   * little. Larger blocks spread the per-block overhead (~200 bytes) thinner.
   */
  blockItemsMax: 16_384,
  /**
   * Longest time one block stays open (10 s): a block is forgotten when its
   * newest entry is outcome_retention_ms old, so an acked outcome is kept at
   * least the retention and at most this much longer.
   */
  blockSpanMs: 10_000,
  /** Acked-log records deleted per commit (1,000): bounds a purge's share of one commit; the rest go with the next. */
  purgeRecordsPerCommitMax: 1000,
  /**
   * Size at which the LMDB store stops rewriting its open acked-log record
   * and starts another (1,536 bytes): each commit that acks rewrites the open
   * record, so this bounds that rewrite, and it keeps the record inside one
   * 4 KiB LMDB page (no overflow pages). A record also closes once it has been
   * open blockSpanMs, which bounds how much longer than the retention its
   * first keys are kept.
   */
  logRecordBytesMax: 1536,
});

/**
 * The LMDB store's deferred deletes of acked records (storage/lmdb/ack-sweep.ts,
 * docs/STORAGE.md "Acked records are swept").
 */
export const ackSweepBounds = Object.freeze({
  /**
   * Acked records left in place after each commit (8,192): every commit
   * deletes the lowest acked keys beyond these, so deletes of neighbouring
   * keys share a page rewrite. Larger keeps more pages shared and more dead
   * records on disk (about 2 MiB at this size with 250-byte records) and in
   * the queue (18 bytes a key); a restart skips and deletes them.
   */
  lagKeys: 8192,
});

/**
 * Bounds of the web dashboard (src/dashboard/, docs/DASHBOARD.md). Not
 * configurable: they bound memory and abuse, not the queue's behaviour.
 */
export const dashboardLimits = Object.freeze({
  /** A signed-in session lasts 8 hours from sign-in (a working day), then the cookie and the server's record expire. */
  sessionMs: 8 * 60 * 60 * 1000,
  /** Live sessions (1,000): each is a few hundred bytes; past it the oldest is dropped (its user signs in again). */
  sessionsMax: 1000,
  /** Sign-in attempts per client address per minute (10): enough for typos, far too few to guess a token. */
  signInsPerMinuteMax: 10,
  /** Client addresses whose sign-in attempts are counted at once (10,000): past it the stalest is forgotten. */
  signInClientsMax: 10_000,
  /** History: one fine sample every 5 s, 720 kept (an hour), and one coarse sample a minute, 1,440 kept (a day). */
  historyFineSampleMs: 5000,
  historyFineSamples: 720,
  historyCoarseSampleMs: 60_000,
  historyCoarseSamples: 1440,
  /**
   * Namespaces (50) and topics (200, over all namespaces) with a history:
   * each namespace costs about 190 KB of samples, each topic about 100 KB.
   * Past these, new names get none (the page says so); Prometheus is the
   * long-term store.
   */
  historyNamespacesMax: 50,
  historyTopicsMax: 200,
  /** Largest sign-in or action form body (64 KiB): a dead-letter selection of 1,000 ids fits. */
  formBytesMax: 64 * 1024,
  /** `redrive` calls one "redrive all" click may make (10): each redrives up to 10,000, so a large backlog takes one click. */
  redriveAllRoundsMax: 10,
});

/** Cluster mode's bounds (docs/CLUSTER.md). */
export const clusterLimits = Object.freeze({
  /** Default shard lease (5 s, per the contract): a dead node's shards are served again within it plus 2 s. */
  shardLeaseMsDefault: 5_000,
  /** Shortest shard lease (500 ms, per the contract): renewals every third of it must still fit a database round trip. */
  shardLeaseMsMin: 500,
  /** Longest shard lease (10 minutes): beyond it a dead node's shards would sit unserved for too long. */
  shardLeaseMsMax: 10 * 60 * 1000,
  /**
   * Item keys a node reserves when it opens (2^36, about 69 billion): nodes
   * allocate keys at once and a shard that moves must never see a key twice,
   * so each open takes a range of its own; 2^53 / 2^36 = 131,072 opens.
   */
  keyRangePerOpen: 2 ** 36,
  /** Retry hint for a shard no live node serves yet (500 ms): a claim comes within a renewal interval. */
  unownedRetryAfterMs: 500,
  /** Retry hint while a node rebuilds its indexes after its shards changed (100 ms): one commit and a load. */
  rebuildRetryAfterMs: 100,
  /** How often a node asks the database how `after` ids on other nodes' shards ended (500 ms): the contract's 1 s, less a commit. */
  remoteDependencyPollMs: 500,
  /** How often a node reads the pause counter, and the pause rows when it moved (250 ms): the contract's 1 s for a pause to act on every node, less a commit and a rebuild's wait. */
  pausePollMs: 250,
  /**
   * How often a node draws quota tokens from the namespaces' buckets in the
   * database, and returns what it holds beyond its need (250 ms): a busy
   * node's tokens follow its use within a period, and an idle node holds at
   * most a floor of one period's refill per namespace (docs/CLUSTER.md).
   */
  quotaDrawPeriodMs: 250,
  /**
   * A node draws up to this many times its use over the last period (2): its
   * next period is covered if its rate doubles, and what it holds unused is
   * at most twice a period's use.
   */
  quotaDrawUseFactor: 2,
  /** RATE_LIMITED hint while this node's draw is under way and the database's bucket holds enough (20 ms): a draw is one single-row UPDATE. */
  quotaDrawRetryAfterMs: 20,
  /**
   * A draw unanswered this long is given up (2 s; also the draws' statement
   * timeout), so one lost reply does not stop the namespace's draws: any
   * tokens it did take are lost to the cluster, never counted twice.
   */
  quotaDrawTimeoutMs: 2_000,
  /** UNAVAILABLE hint when this node's tokens are spent and its last draw failed (1 s): the database is out of reach, and commits fail too. */
  quotaUnreachableRetryAfterMs: 1_000,
  /** Such ids asked per poll (1,000): one query stays small; more are asked at the next poll. */
  remoteDependenciesPerPollMax: 1_000,
  /** Ownership ticks per lease (at least 3): two renewals may fail in a row before a lease runs out. */
  renewalsPerLease: 3,
  /** Longest time between ownership ticks (1 s), whatever the lease: joins, deaths and expired shards are seen at a tick. */
  tickMsMax: 1_000,
  /** Connections of a node's store (4): commits run one at a time; the rest load shards beside them. */
  storeConnectionsMax: 4,
  /** Seconds a store waits for a database connection (10): an unreachable database fails the open or the commit. */
  storeConnectTimeoutS: 10,
  /** Rows per query when a node loads a shard (5,000): bounds the memory one result takes. */
  loadPageRows: 5_000,
  /** Times a cluster client re-routes one request (MOVED, UNAVAILABLE, a lost node) before raising its error (100): far past a takeover. */
  clientRouteAttemptsMax: 100,
  /** A cluster client's pause before re-reading the map after a node could not be reached (100 ms). */
  clientLostNodePauseMs: 100,
});

// Matching (src/engine/matching/, docs/MATCHING.md): defaults of the matcher's
// own bounds. They are not per-server settings (no flag sets them); tests and
// benches pass smaller ones to the constructors.

/**
 * Feature names and string values in `requires` and `capabilities` are at
 * most 255 UTF-8 bytes, like topic names: they are map keys and parts of
 * signature keys held in memory.
 */
export const featureNameBytesMax = 255;
export const stringValueBytesMax = 255;

/**
 * Live distinct signatures (65,536): each costs a byte in every worker kind's
 * verdict array, so 256 kinds x 65,536 signatures bound the cache at 16 MiB.
 * A production fleet has tens to hundreds; more means requirements are being
 * generated per item (e.g. a random range bound), which defeats matching.
 */
export const signaturesMaxDefault = 65_536;

/**
 * Cached worker kinds (256): a fleet rarely has more than tens of distinct
 * capability sets; each kind costs up to one byte per signature id.
 */
export const workerKindsMaxDefault = 256;

/**
 * Eligibility classes per topic (32, one bit each in a slot's mask): a slot
 * that gets a better item costs one sift per class that may take it, so the
 * bound is also a bound on that cost. Fleets have tens of kinds, and kinds
 * with equal verdicts on a topic's groups share a class.
 */
export const eligibleClassesMaxDefault = 32;

/**
 * Picks of a topic (4,096) a class must go unused before a new class may
 * replace it when all are taken: replacing costs a rebuild (a pass over the
 * topic's slots), so classes in steady use are not churned.
 */
export const classIdlePicksMinDefault = 4096;
