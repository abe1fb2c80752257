/** What schedule() returns, for cancel(). Opaque: a real clock's is the runtime's timer handle. */
export type ClientTimer = unknown;
export interface ClientClock {
    /** Monotonic milliseconds with an arbitrary zero: only differences mean anything. */
    nowMs(): number;
    /** Run `run` once, `delayMs` from now. */
    schedule(run: () => void, delayMs: number): ClientTimer;
    /** Cancel a schedule() that has not run yet; a no-op after it ran. */
    cancel(timer: ClientTimer): void;
}
/** performance.now() and the runtime's timers. */
export declare const realClientClock: ClientClock;
