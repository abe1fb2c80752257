/** Cluster mode's bounds (docs/CLUSTER.md). */
export declare const clusterLimits: Readonly<{
    /** Default shard lease (5 s, per the contract): a dead node's shards are served again within it plus 2 s. */
    shardLeaseMsDefault: 5000;
    /** Shortest shard lease (500 ms, per the contract): renewals every third of it must still fit a database round trip. */
    shardLeaseMsMin: 500;
    /** Longest shard lease (10 minutes): beyond it a dead node's shards would sit unserved for too long. */
    shardLeaseMsMax: number;
    /**
     * Item keys a node reserves when it opens (2^36, about 69 billion): nodes
     * allocate keys at once and a shard that moves must never see a key twice,
     * so each open takes a range of its own; 2^53 / 2^36 = 131,072 opens.
     */
    keyRangePerOpen: number;
    /** Retry hint for a shard no live node serves yet (500 ms): a claim comes within a renewal interval. */
    unownedRetryAfterMs: 500;
    /** Retry hint while a node hands its shards over (SIGTERM, 100 ms): the others claim them at their next tick. */
    handoverRetryAfterMs: 100;
    /**
     * A shard being adopted loads (and one given up is forgotten) in steps of
     * at most this long (20 ms) with a turn of the event loop between them, so
     * the node's other shards answer within about 50 ms (a step, plus a step's
     * overrun, plus the requests of a turn) while a shard of a million items
     * moves (decisions/038).
     */
    adoptTurnMs: 20;
    /**
     * Records handled between two looks at a step's clock (1,000): about a
     * millisecond of loading, so a step overruns adoptTurnMs by at most that.
     */
    adoptRecordsPerStep: 1000;
    /** How often a node asks the database how `after` ids on other nodes' shards ended (500 ms): the contract's 1 s, less a commit. */
    remoteDependencyPollMs: 500;
    /** How often a node reads the pause counter, and the pause rows when it moved (250 ms): the contract's 1 s for a pause to act on every node, less a commit. */
    pausePollMs: 250;
    /**
     * How often a node draws quota tokens from the namespaces' buckets in the
     * database, and returns what it holds beyond its need (250 ms): a busy
     * node's tokens follow its use within a period, and an idle node holds at
     * most a floor of one period's refill per namespace (docs/CLUSTER.md).
     */
    quotaDrawPeriodMs: 250;
    /**
     * A node draws up to this many times its use over the last period (2): its
     * next period is covered if its rate doubles, and what it holds unused is
     * at most twice a period's use.
     */
    quotaDrawUseFactor: 2;
    /** RATE_LIMITED hint while this node's draw is under way and the database's bucket holds enough (20 ms): a draw is one single-row UPDATE. */
    quotaDrawRetryAfterMs: 20;
    /**
     * A draw unanswered this long is given up (2 s; also the draws' statement
     * timeout), so one lost reply does not stop the namespace's draws: any
     * tokens it did take are lost to the cluster, never counted twice.
     */
    quotaDrawTimeoutMs: 2000;
    /** UNAVAILABLE hint when this node's tokens are spent and its last draw failed (1 s): the database is out of reach, and commits fail too. */
    quotaUnreachableRetryAfterMs: 1000;
    /** Such ids asked per poll (1,000): one query stays small; more are asked at the next poll. */
    remoteDependenciesPerPollMax: 1000;
    /** Ownership ticks per lease (at least 3): two renewals may fail in a row before a lease runs out. */
    renewalsPerLease: 3;
    /** Longest time between ownership ticks (1 s), whatever the lease: joins, deaths and expired shards are seen at a tick. */
    tickMsMax: 1000;
    /**
     * A node ticks this long (20 ms) after another node's shard lease runs out,
     * when that comes before its next regular tick: the lease's end is read at
     * each tick (by the database's clock), so a dead node's shards are claimed
     * as their leases end, not up to a tick interval later. Live owners renew
     * well before their leases end, so only a node that stopped renewing moves
     * a tick. Also the shortest wait between two ticks
     * (docs/decisions/041-takeover-at-lease-end.md).
     */
    expiryTickMarginMs: 20;
    /**
     * Renewals a shard's owner may miss (2) before the node that would claim
     * the shard reads its rows ahead, while the lease runs out; kept only if
     * the shard did not change by the claim (docs/decisions/050-read-ahead-of-a-takeover.md).
     * One missed tick is common on a busy machine; two leave the read most of the lease.
     */
    missedRenewalsBeforeReadAhead: 2;
    /** Connections of a node's store (4): commits run one at a time; the rest load shards beside them. */
    storeConnectionsMax: 4;
    /** Seconds a store waits for a database connection (10): an unreachable database fails the open or the commit. */
    storeConnectTimeoutS: 10;
    /** Rows per query when a node loads a shard (5,000): bounds the memory one result takes. */
    loadPageRows: 5000;
    /** Times a cluster client re-routes one request (MOVED, UNAVAILABLE, a lost node) before raising its error (100): far past a takeover. */
    clientRouteAttemptsMax: 100;
    /** A cluster client's pause before re-reading the map after a node could not be reached (100 ms). */
    clientLostNodePauseMs: 100;
    /**
     * Items with no key, group or `after` a cluster client sends to one node
     * before it moves on to the next (1,000, ClusterClientOptions.stickyItems):
     * concurrent single-item enqueues then share that node's commits instead
     * of each node committing a third of them (docs/decisions/046-sticky-placement.md).
     */
    clientStickyItems: 1000;
    /**
     * A call with at least this many such items (100) is a commit's worth by
     * itself: it goes to the next node in turn and leaves the sticky node's
     * count alone, so a producer of large batches keeps every node busy (046).
     */
    clientOwnTurnCallItems: 100;
}>;
