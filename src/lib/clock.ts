// The one place that reads real time. Everything else takes `nowMs` as an
// argument or a Clock, so tests can run in simulated time.

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  nowMs(): number;
}

export const systemClock: Clock = {
  nowMs: () => Date.now(),
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
