/**
 * Bounds of the web dashboard (src/dashboard/, docs/DASHBOARD.md). Not
 * configurable: they bound memory and abuse, not the queue's behaviour.
 */
export declare const dashboardLimits: Readonly<{
    /** A signed-in session lasts 8 hours from sign-in (a working day), then the cookie and the server's record expire. */
    sessionMs: number;
    /** Live sessions (1,000): each is a few hundred bytes; past it the oldest is dropped (its user signs in again). */
    sessionsMax: 1000;
    /** Sign-in attempts per client address per minute (10): enough for typos, far too few to guess a token. */
    signInsPerMinuteMax: 10;
    /** Client addresses whose sign-in attempts are counted at once (10,000): past it the stalest is forgotten. */
    signInClientsMax: 10000;
    /** History: one fine sample every 5 s, 720 kept (an hour), and one coarse sample a minute, 1,440 kept (a day). */
    historyFineSampleMs: 5000;
    historyFineSamples: 720;
    historyCoarseSampleMs: 60000;
    historyCoarseSamples: 1440;
    /**
     * Namespaces (50) and topics (200, over all namespaces) with a history:
     * each namespace costs about 190 KB of samples, each topic about 100 KB.
     * Past these, new names get none (the page says so); Prometheus is the
     * long-term store.
     */
    historyNamespacesMax: 50;
    historyTopicsMax: 200;
    /** Largest sign-in or action form body (64 KiB): a dead-letter selection of 1,000 ids fits. */
    formBytesMax: number;
    /** Bytes shown per payload or metadata (4 KiB of text; hex of the first 1 KiB): a page stays small. */
    shownBytesMax: 4096;
    shownHexBytesMax: 1024;
    /** `redrive` calls one "redrive all" click may make (10): each redrives up to 10,000, so a large backlog takes one click. */
    redriveAllRoundsMax: 10;
    /**
     * Cluster mode: the shard map the dashboard routes by is read again when
     * it is older than 1 s (one `cluster` request to this node), so a page asks
     * a node that joined since, at the map's own pace (owners move within
     * seconds), without a map read per op.
     */
    clusterMapRefreshMs: 1000;
    /** Cluster mode: an op asked of another node gives up after 10 s, so a node that hangs costs a page at most this. */
    clusterRequestTimeoutMs: 10000;
}>;
