import { type AckOptions } from "./client.ts";
import { type TopicPage } from "./topic-pages.ts";
import type { ClusterClientOptions, Delivery, DequeueRequest, EndedItemState, EnqueueAndWaitResult, EnqueueItem, GroupPage, ItemExplanation, ItemPage, ItemState, PolicyInput, PolicyPage, PolicyResult, ScheduleInput, SchedulePage } from "./types.ts";
import type { WireMap } from "./transport.ts";
import { type WorkerHandle, type WorkHandler, type WorkOptions } from "./worker.ts";
/** One node's `stats` reply, or why it has none. */
export interface NodeStats {
    nodeId: string | null;
    addr: string;
    stats: Record<string, unknown> | null;
    error?: string;
}
/** The shard an id or receipt names, or -1 when the text is neither (it goes to any node, which answers as for any bad id). */
export declare function shardOf(text: string): number;
export declare class OrqClusterClient {
    private readonly options;
    private readonly seed;
    private readonly clients;
    private map;
    private shards;
    /** The node `nextAddr` gave last, by its place in the map; each client starts at a random one, so clients started together spread. */
    private turn;
    /** Where items that name no shard go, and how many went there (stickyAddr). */
    private home;
    private homeItems;
    private readonly stickyItems;
    /**
     * Per shard, the owner the last MOVED for it named, with that answer's map
     * version: used while the map read is older, as it is when the node that
     * gave it is cut off from the database and cannot know the new owners.
     */
    private readonly movedTo;
    private readonly buffered;
    private constructor();
    /** Connect to any node of the cluster (or a single node). */
    static connect(options?: ClusterClientOptions): Promise<OrqClusterClient>;
    enqueue(ns: string, items: EnqueueItem[]): Promise<string[]>;
    /** Enqueue (split by owner), then wait up to `waitMs` for every item to end, asking each id's owner (OrqClient.enqueueAndWait). */
    enqueueAndWait(ns: string, items: EnqueueItem[], waitMs: number): Promise<EnqueueAndWaitResult>;
    /** The `wait` op across the cluster: each id's owner is asked at once for its ids, so the whole wait lasts about `waitMs` at most. */
    waitFor(ns: string, ids: string[], waitMs: number): Promise<Array<ItemState | EndedItemState | null>>;
    dequeue(ns: string, request: DequeueRequest): Promise<Delivery[]>;
    /** Acks split by owner; each receipt's result (options.results, as long as the receipts) goes with it. */
    ack(ns: string, receipts: string[], options?: Pick<AckOptions, "results">): Promise<{
        acked: number;
        stale: string[];
    }>;
    nack(ns: string, items: Array<{
        receipt: string;
        delayMs?: number;
        metadata?: Uint8Array | string;
    }>): Promise<{
        nacked: number;
        stale: string[];
    }>;
    extend(ns: string, items: Array<{
        receipt: string;
        leaseMs: number;
        metadata?: Uint8Array | string;
    }>): Promise<{
        extended: number;
        stale: string[];
    }>;
    cancel(ns: string, ids: string[]): Promise<{
        cancelled: number;
        missing: string[];
    }>;
    get(ns: string, ids: string[]): Promise<Array<ItemState | EndedItemState | null>>;
    /** Every node's topics summed per topic, one page at a time like OrqClient.topics (topic-pages.ts). */
    topics(ns: string, query?: {
        prefix?: string;
        limit?: number;
        after?: string;
    }): Promise<TopicPage>;
    /** Every node's dead letters of a topic, taken from the nodes in turn (each node's oldest death first), at most `limit` (default 1,000). */
    dead(ns: string, topic: string, query?: {
        limit?: number;
    }): Promise<ItemState[]>;
    /** Redrive the given dead letters on their owners, or (without ids) every node's, summed. */
    redrive(ns: string, topic: string, ids?: string[]): Promise<{
        redriven: number;
    }>;
    /**
     * Every node's `stats` and their sum (cluster-merge.ts). A node that did not
     * answer is listed with its error and adds nothing. On a single node,
     * `merged` is its reply.
     */
    stats(ns?: string): Promise<{
        merged: Record<string, unknown>;
        nodes: NodeStats[];
    }>;
    /**
     * One page of a topic's items from every node: each node gives its next
     * `limit / nodes` items (at least 1) from its own cursor, merged in list
     * order; `next` bundles every node's cursor (cluster-merge.ts). Paging is
     * stable while shards stay on their nodes. On a single node: its page.
     */
    list(ns: string, topic: string, query?: {
        state?: ItemState["state"];
        limit?: number;
        after?: string;
    }): Promise<ItemPage>;
    /** Why each item is not being delivered now, asked of each id's owner; request order, null for an unknown id. */
    explain(ns: string, ids: string[]): Promise<Array<ItemExplanation | null>>;
    /**
     * A request that names items by `ids` (`get`, `explain`), answered in wire
     * form: split by owner and re-routed as `get` is, each node's `items` put
     * back in request order (null for an id no node knows). For a caller that
     * shows the server's own reply, the dashboard.
     */
    requestItems(op: "get" | "explain", ns: string, ids: string[]): Promise<unknown[]>;
    /** A request any node answers for the whole cluster (the schedule ops, pauses, policies), in wire form, sent as `pause` is. */
    requestAnyNode(op: string, fields: WireMap): Promise<WireMap>;
    /** Pause a topic, or one of its groups, on the whole cluster (any node writes it; every node holds it within 1 s). */
    pause(ns: string, topic: string, query?: {
        forMs?: number;
        group?: string;
    }): Promise<{
        pausedUntilMs: number | null;
    }>;
    /** Lift a topic's pause, or one group's, on the whole cluster. */
    resume(ns: string, topic: string, query?: {
        group?: string;
    }): Promise<{
        resumed: boolean;
    }>;
    /** Set or clear a policy (OrqClient.policy); any node stores it for the whole cluster. */
    policy(ns: string, topic: string, input: PolicyInput): Promise<PolicyResult>;
    /** One page of a topic's policies: every node holds them all, so one node answers. */
    policies(ns: string, topic: string, query?: {
        limit?: number;
        after?: string;
    }): Promise<PolicyPage>;
    /** Create or replace a schedule (OrqClient.schedule); any node stores it for the whole cluster. */
    schedule(ns: string, input: ScheduleInput): Promise<{
        name: string;
        nextAtMs: number;
    }>;
    /** Remove a schedule on the whole cluster. */
    unschedule(ns: string, name: string): Promise<{
        removed: boolean;
    }>;
    /** One page of the namespace's schedules: every node reads them all from the shared database, so one node answers. */
    schedules(ns: string, query?: {
        limit?: number;
        after?: string;
    }): Promise<SchedulePage>;
    /** Every node's groups of a topic, one page at a time like OrqClient.groups, counts summed per group (group-pages.ts). */
    groups(ns: string, topic: string, query?: {
        limit?: number;
        after?: string;
    }): Promise<GroupPage>;
    /** True when the server is a cluster node (its `cluster` op answered a map). */
    get isCluster(): boolean;
    /** The worker loop (worker.ts) over the whole cluster. */
    work(options: WorkOptions, handler: WorkHandler): WorkerHandle;
    close(): Promise<void>;
    /** Read the map from any node that answers (the seed first). */
    refresh(): Promise<void>;
    /**
     * Ask every node (one at a time, in map order). In a cluster a node gone or
     * busy (the map still names it until its lease runs out) answers null with
     * its error; any other error, or any error of a single node, is thrown.
     */
    private everyNode;
    private nodeIdOf;
    /**
     * One request that any node answers for the whole cluster (pauses and
     * policies), sent to the same node each time: the seed while it answers,
     * else the next in the map. The other nodes take a change up within 1 s,
     * so asking one node lets a caller read back its own pause, resume or
     * policy at once (a resume sent elsewhere could answer `resumed: false`
     * for a pause that node has not seen yet).
     */
    private anyNode;
    /**
     * Send `entries` in one request per owning node; re-route the groups MOVED,
     * refused or cut off, until all are done. Entries that name no shard go to
     * any node: with `sticky`, the client's current home (stickyAddr), else the
     * next in turn.
     */
    private routeBatch;
    private ownerAddr;
    private nodeAddrs;
    private nextAddr;
    /**
     * The node for a call's `items` items that name no shard: the same one
     * until stickyItems have gone there (a call is never split), then the next
     * in turn, as Kafka's sticky partitioner fills one batch before it moves on;
     * a call of clientOwnTurnCallItems or more takes the next node in turn for
     * itself (docs/decisions/046-sticky-placement.md). A home that left the
     * map, or failed a request, is replaced at once.
     */
    private stickyAddr;
    private client;
    private forget;
}
