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
/** What the keeper reports: worker.ts's WorkerEvent includes these. */
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
    /** Run `fn` once after `delayMs`, without keeping the process alive for it. */
    after(delayMs: number, fn: () => void): void;
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
    /**
     * Whether a firing is pending. It stays pending when the last lease is
     * released: a loop that takes and releases a lease per item would
     * otherwise set and clear a timer per item (about 3 µs each in Bun); a
     * firing that finds nothing due arms for the first lease kept, if any.
     */
    private armed;
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
