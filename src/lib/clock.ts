// The one place that reads real time. Everything else takes `nowMs` as an
// argument or a Clock, so tests can run in simulated time.

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  nowMs(): number;
}

export const systemClock: Clock = {
  nowMs: () => Date.now(),
};

/**
 * Times durations (request latency, storage commits, collections):
 * monotonic and sub-millisecond, unlike the wall clock (an NTP step must not
 * look like a slow commit). Its zero is arbitrary: never a deadline.
 */
export const monotonicStopwatch: Clock = {
  nowMs: () => performance.now(),
};

/** A clock that only moves when told to: for unit tests and simulation. */
export class ManualClock implements Clock {
  private currentMs: number;
  constructor(startMs = 1_700_000_000_000) {
    this.currentMs = startMs;
  }
  nowMs(): number {
    return this.currentMs;
  }
  advance(deltaMs: number): void {
    if (deltaMs < 0) throw new Error("ManualClock cannot go backwards");
    this.currentMs += deltaMs;
  }
  set(ms: number): void {
    this.currentMs = ms;
  }
}
