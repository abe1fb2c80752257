import { type TopicPage } from "./topic-pages.ts";
import type { ClientOptions, Delivery, DequeueRequest, EndedItemState, EnqueueItem, ItemPage, ItemState } from "./types.ts";
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
    private turn;
    private readonly buffered;
    private constructor();
    /** Connect to any node of the cluster (or a single node). */
    static connect(options?: ClientOptions): Promise<OrqClusterClient>;
    enqueue(ns: string, items: EnqueueItem[]): Promise<string[]>;
    dequeue(ns: string, request: DequeueRequest): Promise<Delivery[]>;
    ack(ns: string, receipts: string[]): Promise<{
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
    private itemShard;
    /** Send `entries` in one request per owning node; re-route the groups MOVED, refused or cut off, until all are done. */
    private routeBatch;
    private ownerAddr;
    private nodeAddrs;
    private nextAddr;
    private client;
    private forget;
}
