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
  /** How long an ended item's outcome is kept for `get` and `after` (1 hour, per the contract). Configurable. */
  outcomeRetentionMs: number;
  /** Most due deadlines (delays, leases, TTLs, waiter timeouts) handled per timer tick (10,000): keeps one tick short. */
  deadlinesPerTickMax: number;
  /**
   * How long a worker's dequeue of a topic counts as a recent ask for the
   * unmatchable-items report in `stats` (10 minutes): longer than waitMsMax,
   * so a worker parked in a long-poll counts as asking for its whole wait.
   */
  unmatchableAskWindowMs: number;
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
  outcomeRetentionMs: 60 * 60 * 1000,
  deadlinesPerTickMax: 10_000,
  unmatchableAskWindowMs: 10 * 60 * 1000,
});

/** Item defaults from the contract's item table. */
export const itemDefaults = Object.freeze({
  leaseMs: 30_000,
  maxAttempts: 10,
  priority: 0,
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
