import type { Delivery } from "./types.ts";
/** What the keeper asks of the client (worker.ts's WorkerClient has it). */
export interface ExtendingClient {
    extend(ns: string, items: Array<{
        receipt: string;
        leaseMs: number;
    }>): Promise<{
        extended: number;
        stale: string[];
    }>;
}
/** What the keeper reports (a part of worker.ts's WorkerEvent). */
export type LeaseEvent = {
    kind: "extended";
    delivery: Delivery;
    leaseMs: number;
} | {
    kind: "lease_lost";
    delivery: Delivery;
} | {
    kind: "error";
    during: "extend";
    error: unknown;
    delivery: Delivery;
};
/** The keeper's clock and its one timer (real ones but in tests). */
export interface KeeperTimers {
    nowMs(): number;
    /** Run `fn` once after `delayMs`; returns what cancels it. */
    after(delayMs: number, fn: () => void): () => void;
}
export declare class LeaseKeeper {
    private readonly client;
    private readonly ns;
    private readonly leaseMs;
    private readonly everyMs;
    private readonly emit;
    private readonly timers;
    /** By receipt, in the order the leases fall due (a Map keeps insertion order). */
    private readonly held;
    /** Cancels the pending firing, if one is armed. */
    private cancelTimer;
    constructor(client: ExtendingClient, ns: string, leaseMs: number, everyMs: number, emit: (event: LeaseEvent) => void, timers?: KeeperTimers);
    /** Keep `delivery`'s lease alive until release(); onLost runs if an extend finds it stale first. */
    keep(delivery: Delivery, onLost: () => void): void;
    /** The handler has returned: no more extends for it. */
    release(delivery: Delivery): void;
    /** Leases kept now. */
    get size(): number;
    /** A timer for the lease due first, if any. */
    private arm;
    private fire;
    private extend;
}
