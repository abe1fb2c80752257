import { type LeaseEvent } from "./lease-keeper.ts";
import type { Delivery, DequeueRequest } from "./types.ts";
export interface WorkOptions {
    ns: string;
    topic: string;
    /** Sent with every dequeue; without it only items without `requires` match. */
    capabilities?: Record<string, unknown>;
    /** Handlers running at once, 1..1000. */
    concurrency: number;
    /** Lease of each delivery, renewed while its handler runs. */
    leaseMs: number;
    /** Long-poll wait of each dequeue (default 5,000 ms); also the longest stop() waits for one in flight. */
    waitMs?: number;
    /** Extend when this fraction of the lease has passed (default 0.5), 0.1..0.9. */
    extendAtFraction?: number;
    /** First nack delay (default 1,000 ms), doubled per attempt. */
    backoffBaseMs?: number;
    /** Largest nack delay (default 300,000 ms = 5 min). */
    backoffMsMax?: number;
    /** Pause after a failed dequeue (default 1,000 ms, or the error's retry_after_ms). */
    errorPauseMs?: number;
    /** Run each handler in an OpenTelemetry CONSUMER span, child of the item's trace (default true; needs @opentelemetry/api). */
    trace?: boolean;
    /** What happened, for logs and tests. Exceptions thrown here are ignored. */
    onEvent?: (event: WorkerEvent) => void;
}
/**
 * What the loop calls: an OrqClient, or an OrqClusterClient (cluster-client.ts)
 * for a whole cluster. Spelled out here rather than picked from OrqClient so the
 * client's files import one way (client.ts -> worker.ts), with no circle back.
 */
export interface WorkerClient {
    dequeue(ns: string, request: DequeueRequest): Promise<Delivery[]>;
    ack(ns: string, receipts: string[], options?: {
        results?: Array<Uint8Array | string | null | undefined>;
    }): Promise<{
        acked: number;
        stale: string[];
    }>;
    nack(ns: string, items: Array<{
        receipt: string;
        delayMs?: number;
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
}
export interface HandlerContext {
    /** Fires when the lease was lost (an extend found the receipt stale): the work will not count. */
    signal: AbortSignal;
    /**
     * Report progress: replaces the item's metadata (get shows it) and renews
     * the lease, in one extend. Resolves false when the lease was already lost.
     */
    progress(metadata: Uint8Array | string): Promise<boolean>;
}
/**
 * What a handler returns: bytes or a string (sent as UTF-8) become the item's
 * result, given with its ack (get and waitFor return it); nothing, no result.
 * Any other value is not sent.
 */
export type WorkResult = Uint8Array | string | undefined | void;
/** Gets each delivery as the dequeue returned it: its `group` (absent for an item without one) tells a handler whose work it is. */
export type WorkHandler = (delivery: Delivery, context: HandlerContext) => Promise<WorkResult> | WorkResult;
/** What the loop reports; the lease keeper's events (`extended`, `lease_lost`, an extend's `error`) are its own (lease-keeper.ts). */
export type WorkerEvent = {
    kind: "acked";
    delivery: Delivery;
    stale: boolean;
} | {
    kind: "nacked";
    delivery: Delivery;
    delayMs: number;
    error: unknown;
    stale: boolean;
} | {
    kind: "error";
    during: "dequeue" | "ack" | "nack";
    error: unknown;
    delivery?: Delivery;
} | LeaseEvent;
export interface WorkerHandle {
    /** Graceful stop; resolves once every delivery taken has been acked or nacked. */
    stop(): Promise<void>;
    /** Resolves when the loop has ended (after stop(), or when the client was closed). */
    readonly done: Promise<void>;
    /** Handlers running now. */
    readonly running: number;
}
export declare const workDefaults: {
    readonly waitMs: 5000;
    readonly extendAtFraction: 0.5;
    readonly backoffBaseMs: 1000;
    readonly backoffMsMax: 300000;
    readonly errorPauseMs: 1000;
};
/** Largest concurrency (1,000): one dequeue's count limit. */
export declare const workConcurrencyMax = 1000;
/** The nack delay after a handler threw on delivery `attempt` (1-based). */
export declare function nackDelayMs(attempt: number, backoffBaseMs: number, backoffMsMax: number): number;
export declare function startWorker(client: WorkerClient, options: WorkOptions, handler: WorkHandler): WorkerHandle;
