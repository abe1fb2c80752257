// The time the client's connection reads: request deadlines, the timeout
// sweep, the connect timeout and the reconnect back-off. Real by default
// (`realClientClock`); a test or a simulation passes its own through
// ClientOptions.clock, so that a request timing out is a step of simulated
// time, not a race between a sleep and the machine's load.
//
// Not covered: the worker loop's timers (worker.ts). They pace requests to a
// server whose leases run on its own real clock, so simulated time there
// would only desynchronise the two.

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
export const realClientClock: ClientClock = Object.freeze({
  nowMs: () => performance.now(),
  schedule: (run: () => void, delayMs: number): ClientTimer => setTimeout(run, delayMs),
  cancel: (timer: ClientTimer): void => clearTimeout(timer as ReturnType<typeof setTimeout>),
});
