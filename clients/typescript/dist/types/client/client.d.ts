import { type WireMap } from "./transport.ts";
import { type WorkerHandle, type WorkHandler, type WorkOptions } from "./worker.ts";
import type { ClientOptions, Delivery, DequeueRequest, EndedItemState, EnqueueAndWaitResult, EnqueueItem, GroupPage, ItemExplanation, ItemPage, ItemState, PolicyInput, PolicyPage, PolicyResult, ScheduleInput, SchedulePage, ServerHello, TopicCounts } from "./types.ts";
/** A request-options bag every method accepts. */
export interface CallOptions {
    /** Overrides the client's requestTimeoutMs for this call. */
    timeoutMs?: number;
}
/** ack's options: `results`, as long as the receipts, gives each item a result (bytes, or a string sent as UTF-8; null for none). */
export interface AckOptions extends CallOptions {
    results?: Array<Uint8Array | string | null | undefined>;
}
export declare class OrqClient {
    private readonly transport;
    /** What the server said in the last hello. */
    server: ServerHello | null;
    private constructor();
    /** Connect and say hello (with the token, if any); rejects with OrqError (e.g. UNAUTHORIZED, unless helloRequired is false). */
    static connect(options?: ClientOptions): Promise<OrqClient>;
    get connected(): boolean;
    /** Any op by name, with wire (snake_case) fields; resolves with the reply map. */
    request(op: string, fields?: WireMap, options?: CallOptions): Promise<WireMap>;
    /** One of the contract's ops, as the typed methods send it: a misspelt op name is a type error. */
    private call;
    hello(options?: CallOptions): Promise<ServerHello>;
    ping(options?: CallOptions): Promise<{
        nowMs: number;
    }>;
    /**
     * Enqueue a batch (all or nothing); resolves with the ids in request order
     * once stored. An item without `trace` gets the active OpenTelemetry trace
     * context, when @opentelemetry/api is installed and tracing is on.
     */
    enqueue(ns: string, items: EnqueueItem[], options?: CallOptions): Promise<string[]>;
    /**
     * Enqueue a batch, then wait up to `waitMs` for every item to end
     * (waitFor): the request-reply pattern. Items still live when the wait runs
     * out come back in their current state.
     */
    enqueueAndWait(ns: string, items: EnqueueItem[], waitMs: number, options?: CallOptions): Promise<EnqueueAndWaitResult>;
    /**
     * The `wait` op: resolves as soon as every id has ended (acked items with
     * their `result`), or when `waitMs` runs out, with each item's state at that
     * moment, in request order (null for an id the server does not know). The
     * timeout covers waitMs plus the usual request timeout.
     */
    waitFor(ns: string, ids: string[], waitMs: number, options?: CallOptions): Promise<Array<ItemState | EndedItemState | null>>;
    /** Lease ready items; with waitMs, waits for items up to that long. The timeout covers waitMs plus the usual request timeout. */
    dequeue(ns: string, request: DequeueRequest, options?: CallOptions): Promise<Delivery[]>;
    /** End deliveries (outcome acked); `options.results` gives each item a result that get and waitFor return. */
    ack(ns: string, receipts: string[], options?: AckOptions): Promise<{
        acked: number;
        stale: string[];
    }>;
    nack(ns: string, items: Array<{
        receipt: string;
        delayMs?: number;
        metadata?: Uint8Array | string;
    }>, options?: CallOptions): Promise<{
        nacked: number;
        stale: string[];
    }>;
    /** Set leases to end `leaseMs` from now; `metadata`, when given, replaces the item's (progress a long job reports). */
    extend(ns: string, items: Array<{
        receipt: string;
        leaseMs: number;
        metadata?: Uint8Array | string;
    }>, options?: CallOptions): Promise<{
        extended: number;
        stale: string[];
    }>;
    cancel(ns: string, ids: string[], options?: CallOptions): Promise<{
        cancelled: number;
        missing: string[];
    }>;
    get(ns: string, ids: string[], options?: CallOptions): Promise<Array<ItemState | EndedItemState | null>>;
    topics(ns: string, query?: {
        prefix?: string;
        limit?: number;
        after?: string;
    }, options?: CallOptions): Promise<{
        topics: TopicCounts[];
        next: string | null;
    }>;
    /**
     * One page of a topic's items, read only: ready ones in delivery order, the
     * others in enqueue order (only `state` when given). A page may hold fewer
     * than `limit` items while `next` is still set: keep going until it is null.
     */
    list(ns: string, topic: string, query?: {
        state?: ItemState["state"];
        limit?: number;
        after?: string;
    }, options?: CallOptions): Promise<ItemPage>;
    /**
     * Stop deliveries from a topic (or, with `group`, from that group's items
     * only) for `forMs`, or until resume; replaces an earlier pause's end.
     */
    pause(ns: string, topic: string, query?: {
        forMs?: number;
        group?: string;
    }, options?: CallOptions): Promise<{
        pausedUntilMs: number | null;
    }>;
    /** Lift a topic's pause (or one group's); `resumed` is false when it was not paused. */
    resume(ns: string, topic: string, query?: {
        group?: string;
    }, options?: CallOptions): Promise<{
        resumed: boolean;
    }>;
    /**
     * Set the policy of a topic (no `group`), of one group, or of every group
     * without one of its own (`group: "*"`). It replaces the whole stored
     * policy: a bound not given is no bound. `clear` removes it instead.
     */
    policy(ns: string, topic: string, input: PolicyInput, options?: CallOptions): Promise<PolicyResult>;
    /** One page of a topic's policies: its own first, then by group name. */
    policies(ns: string, topic: string, query?: {
        limit?: number;
        after?: string;
    }, options?: CallOptions): Promise<PolicyPage>;
    /** One page of a topic's groups with their counts by state, by group name (the items without a group, `group: null`, first). */
    groups(ns: string, topic: string, query?: {
        limit?: number;
        after?: string;
    }, options?: CallOptions): Promise<GroupPage>;
    /** Why each item is not being delivered right now, in request order (null for an id the server does not know). */
    explain(ns: string, ids: string[], options?: CallOptions): Promise<Array<ItemExplanation | null>>;
    dead(ns: string, topic: string, query?: {
        limit?: number;
    }, options?: CallOptions): Promise<ItemState[]>;
    redrive(ns: string, topic: string, ids?: string[], options?: CallOptions): Promise<{
        redriven: number;
    }>;
    /** Create or replace a recurring item (the contract's "Schedules"); resolves with its next tick. */
    schedule(ns: string, input: ScheduleInput, options?: CallOptions): Promise<{
        name: string;
        nextAtMs: number;
    }>;
    /** Remove a schedule; `removed` is false when there was none of that name. */
    unschedule(ns: string, name: string, options?: CallOptions): Promise<{
        removed: boolean;
    }>;
    /** One page of the namespace's schedules, by name. */
    schedules(ns: string, query?: {
        limit?: number;
        after?: string;
    }, options?: CallOptions): Promise<SchedulePage>;
    /** Counters and gauges (see docs/PROTOCOL.md), as the server sends them. */
    stats(ns?: string, options?: CallOptions): Promise<Record<string, unknown>>;
    /**
     * Run a worker loop on this connection: long-poll dequeues of one topic,
     * up to `concurrency` handlers at once, leases extended while they run, ack
     * on success, nack with exponential back-off on a throw (see worker.ts).
     */
    work(options: WorkOptions, handler: WorkHandler): WorkerHandle;
    /** The trace context enqueue writes into items without one: the active span's, when tracing is on and some item needs it. */
    private producerTrace;
    /** Close the connection; pending requests reject with CLOSED. */
    close(): Promise<void>;
}
