import type { LiveStateName } from "../protocol/live-states.ts";
import type { ClientClock } from "./client-clock.ts";
export type DeliveryMode = "at_least_once" | "at_most_once";
export interface EnqueueItem {
    topic: string;
    priority?: number;
    payload?: Uint8Array | string;
    metadata?: Uint8Array | string;
    delayMs?: number;
    deliverAtMs?: number;
    leaseMs?: number;
    ttlMs?: number;
    delivery?: DeliveryMode;
    maxAttempts?: number;
    requires?: Record<string, unknown>;
    after?: string[];
    key?: string;
}
export interface DequeueRequest {
    topics: Array<{
        topic: string;
        count?: number;
    }>;
    capabilities?: Record<string, unknown>;
    waitMs?: number;
    leaseMs?: number;
}
export interface Delivery {
    id: string;
    topic: string;
    priority: number;
    payload: Uint8Array;
    metadata: Uint8Array;
    attempt: number;
    receipt: string;
    leaseExpiresAtMs: number;
    enqueuedAtMs: number;
}
export interface ItemState {
    id: string;
    topic: string;
    state: LiveStateName;
    priority: number;
    payload: Uint8Array;
    metadata: Uint8Array;
    attempt: number;
    deliverAtMs: number;
    enqueuedAtMs: number;
    leaseExpiresAtMs?: number;
    requires?: Record<string, unknown>;
    after?: string[];
    key?: string;
    deadReason?: string;
}
export interface EndedItemState {
    id: string;
    state: "ended";
    outcome: "acked" | "cancelled" | "expired";
}
export interface TopicCounts {
    topic: string;
    ready: number;
    delayed: number;
    waiting: number;
    leased: number;
    dead: number;
    /** Whether the topic is paused (OrqClient.pause). */
    paused: boolean;
    /** When a timed pause ends; absent for a pause until resume, and when not paused. */
    pausedUntilMs?: number;
}
/** A page of OrqClient.list: `next` continues the listing (pass it as `after`), null when done. */
export interface ItemPage {
    items: ItemState[];
    next: string | null;
}
export interface ServerHello {
    server: string;
    version: string;
    protocol: number;
    nodeId: string;
    shards: number;
    maxFrameBytes: number;
    limits: {
        payloadBytesMax: number;
        metadataBytesMax: number;
        itemsPerEnqueueMax: number;
        countPerDequeueMax: number;
        topicBytesMax: number;
        waitMsMax: number;
        leaseMsMax: number;
        idsPerRequestMax: number;
    };
}
export interface ClientOptions {
    host?: string;
    port?: number;
    /** Sent in every hello (at connect and after each reconnect). */
    token?: string;
    /** Sent as hello.client, for the server's logs. */
    clientName?: string;
    /**
     * When false, a hello answered UNAUTHORIZED still leaves connect() connected
     * (with `server` null): enough for `ping`, which needs no token. Default true:
     * connect() rejects.
     */
    helloRequired?: boolean;
    /** Per-request timeout (default 30 s); a dequeue gets its wait_ms on top. */
    requestTimeoutMs?: number;
    /** How long connect() waits for the TCP connection and hello (default 5 s). */
    connectTimeoutMs?: number;
    /** Reconnect after a lost connection (default true). */
    reconnect?: boolean;
    /** First reconnect delay (default 100 ms), doubled per failed attempt up to reconnectDelayMsMax (default 5 s). */
    reconnectDelayMs?: number;
    reconnectDelayMsMax?: number;
    /** Largest reply frame accepted (default 256 MiB: a dequeue of many large items is big). */
    frameBytesMax?: number;
    /** Connection events, for logging: "disconnected", "reconnected", "reconnect_failed". */
    onEvent?: (event: ClientEvent) => void;
    /**
     * The time request timeouts, the connect timeout and reconnect delays read
     * (default: performance.now() and the runtime's timers). For tests and
     * simulations that step time themselves (client-clock.ts).
     */
    clock?: ClientClock;
}
export type ClientEvent = {
    kind: "disconnected";
    error: Error | null;
} | {
    kind: "reconnected";
    attempt: number;
} | {
    kind: "reconnect_failed";
    attempt: number;
    error: Error;
    delayMs: number;
} | {
    kind: "hello_failed";
    error: Error;
};
