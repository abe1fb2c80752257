// The shape of the engine's `stats` view (built by stats.ts): what each field
// counts and in what unit. Every count is a plain number of the things its
// doc names; times are epoch milliseconds. The server writes it to the wire
// field by field (server/ops/stats.ts); the metrics read a part of it
// (observability/gauge-snapshot.ts). Counters live in memory only and restart
// at 0 with the server. It imports nothing, so every engine file may use it.

/** A namespace's events since start: items, except `delivered` and `nacked`, which count deliveries. */
export interface NamespaceCounters {
  enqueued: number;
  delivered: number;
  acked: number;
  nacked: number;
  expired: number;
  cancelled: number;
  dead: number;
  redriven: number;
}

export interface UnmatchableSignature {
  /** The signature's requirements in canonical form (equivalent to what was enqueued; feature names unchanged). */
  requires: Record<string, unknown>;
  /** Ready items of this topic with this signature. */
  items: number;
}

export interface UnmatchableReport {
  /** Whether any worker asked this topic within the window. */
  asked: boolean;
  /** Distinct worker kinds that asked within the window. */
  askers: number;
  /** Ready items no recent asker may take (0 when nobody asked). */
  items: number;
  signatures: UnmatchableSignature[];
  signaturesTruncated: boolean;
}

/** Live items by state, in items (dead letters included as `dead`). */
export interface StateCounts {
  ready: number;
  delayed: number;
  waiting: number;
  leased: number;
  dead: number;
}

/** One listed topic: its items by state and its unmatchable-items report. */
export interface TopicStats extends StateCounts {
  unmatchable: UnmatchableReport;
}

/** A namespace's enqueue quota, when it has one. */
export interface QuotaStats {
  /** The configured rate, in items per minute. */
  enqueuePerMinute: number;
  /** Items that may be enqueued now (whole tokens in the bucket). */
  available: number;
}

export interface NamespaceStats extends StateCounts {
  /** Topics in the namespace, in topics (all of them, listed or not). */
  topicCount: number;
  /** The first limits.topicsPageMax topics in byte order of name; keys are topic names as the client chose them. */
  topics: Record<string, TopicStats>;
  /** True when the namespace has more topics than `topics` lists. */
  topicsTruncated: boolean;
  /** Unmatchable ready items over the listed topics, in items. */
  unmatchable: number;
  /** Dequeues parked on this namespace, in waiters. */
  parkedWaiters: number;
  /** Events since start, in items (deliveries for `delivered` and `nacked`). */
  counters: NamespaceCounters;
  quota: QuotaStats | null;
}

/** Sums over the namespaces shown. */
export interface StatsTotals extends StateCounts {
  /** In topics. */
  topics: number;
  /** In waiters. */
  parkedWaiters: number;
}

/** Engine-wide gauges; each a count of the named thing. */
export interface EngineGauges {
  /** Live items, every state, dead letters included (bounded by liveItemsMax). */
  items: number;
  /** Topics over all namespaces (bounded by topicsMax). */
  topics: number;
  /** Namespaces (bounded by namespacesMax). */
  namespaces: number;
  /** Ended items whose outcome is still kept for `get`. */
  outcomesRetained: number;
  /** Acked items whose `ack` result is still kept for `get`, and those results' bytes. */
  resultsRetained: number;
  resultsRetainedBytes: number;
  /** `wait` requests parked now, and answered since start (ops/item-waits.ts). */
  itemWaitsParked: number;
  itemWaitsAnsweredTotal: number;
  /** Pending deadlines (delays, leases, TTLs, waiter timeouts, retention). */
  deadlines: number;
  /** Dependency edges (`after`) between live items. */
  dependencyEdges: number;
  /** Distinct requirement signatures of live items. */
  signatures: number;
  /** Distinct capability sets the matcher knows. */
  workerKinds: number;
  /** Background writes (lease, expiry, dependency dead letters) that failed to commit, since start. */
  backgroundWriteFailures: number;
  /** Enqueues whose commit failed and were rolled out of memory, since start. */
  enqueueRollbacks: number;
  /** Paused topics. */
  pausedTopics: number;
  /** Parked dequeues over all namespaces, in waiters. */
  parkedWaitersTotal: number;
  /** Items whose stored values the delivery prefetch asked the store to read in, since start (engine/ready/delivery-prefetch.ts). */
  prefetchKeysTotal: number;
  /** Deliveries passed over by bounds since start, by reason (engine/groups/bounds.ts). */
  passedOver: Readonly<Record<string, number>>;
  /** Deliveries of items with `prefers` since start, by fit: full, partial, released (engine/matching/fit-counts.ts). */
  preferenceDeliveries: Readonly<Record<string, number>>;
}

export interface EngineStats {
  /** The engine's time of the view, epoch milliseconds. */
  nowMs: number;
  totals: StatsTotals;
  /** Summed over the namespaces shown, since start. */
  counters: NamespaceCounters;
  /** Keys are namespace names as the client chose them. */
  namespaces: Record<string, NamespaceStats>;
  /** Only in an unfiltered view (every namespace): the gauges span all of them. */
  engine?: EngineGauges;
}
