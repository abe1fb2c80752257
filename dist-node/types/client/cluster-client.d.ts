import { type TopicPage } from "./topic-pages.ts";
import type { ClientOptions, Delivery, DequeueRequest, EndedItemState, EnqueueItem, ItemState } from "./types.ts";
import { type WorkerHandle, type WorkHandler, type WorkOptions } from "./worker.ts";
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
    /** Every node's topics, counts summed per topic, in name order. */
    /** Every node's topics summed per topic, one page at a time like OrqClient.topics (topic-pages.ts). */
    topics(ns: string, query?: {
        prefix?: string;
        limit?: number;
        after?: string;
    }): Promise<TopicPage>;
    /** The worker loop (worker.ts) over the whole cluster. */
    work(options: WorkOptions, handler: WorkHandler): WorkerHandle;
    close(): Promise<void>;
    /** Read the map from any node that answers (the seed first). */
    refresh(): Promise<void>;
    private itemShard;
    /** Send `entries` in one request per owning node; re-route the groups MOVED, refused or cut off, until all are done. */
    private routeBatch;
    private ownerAddr;
    private nodeAddrs;
    private nextAddr;
    private client;
    private forget;
}
