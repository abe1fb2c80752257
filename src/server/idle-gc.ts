// The idle garbage-collection hints. After a burst of requests the JS heap
// holds the burst's garbage (decoded frames, replies, promises) and the
// allocator holds the freed pages; JavaScriptCore's own collector usually
// gives them back 1.5-7 s into a quiet spell, but in some runs a
// 1,000,000-item server still held 414-438 MiB of anonymous memory after
// 10 s (about 275 MiB once collected; docs/decisions/008-idle-collection.md).
// So, in two stages, after at least `idleGcRequestsMin` requests since the
// last one:
//
// 1. once a whole check interval (`idleGcIdleMs`) passes with no request,
//    `collect("hint")`: in production `Bun.gc(false)`, which asks for a
//    concurrent collection and returns after 3-13 ms at 1,000,000 items;
// 2. if no request at all arrives in the `idleGcFullIdleMs` after that, and
//    resident memory has not already fallen by `idleGcFallenFraction` since
//    the hint (JavaScriptCore collected on its own), `collect("full")`:
//    `Bun.gc(true)`, a synchronous full collection that blocks the event
//    loop 96-327 ms at 1,000,000 items, acceptable only because the server
//    has then been silent for more than ten seconds.
//
// The request path pays one increment and one check: no clock read.
// Idleness is judged by the timer instead: it is armed only while requests
// arrive, and when it fires it compares the request count with the one it
// saw when armed. So "idle" means between idleMs and 2 x idleMs without a
// request, and a server with no traffic has no timer armed at all.

/** How long without a request counts as idle (1 s): longer than a pipelining client's gaps, short enough that memory falls soon after a burst. */
export const idleGcIdleMs = 1000;

/**
 * Silence after the hint before the full, blocking collection (10 s): long
 * past any pipelining gap or retry back-off, so the 96-327 ms pause (at
 * 1,000,000 items) is unlikely to meet a request; by then JavaScriptCore has
 * usually collected on its own, but not always.
 */
export const idleGcFullIdleMs = 10_000;

/**
 * Resident memory fallen by this fraction since the hint (20%) means the
 * garbage is already gone, and a full collection would pause the server for
 * little. After a 1,000,000-item load, RSS fell 35-45% when JavaScriptCore
 * collected and stayed within a few % when it did not.
 */
export const idleGcFallenFraction = 0.2;

/**
 * Requests since the last hint before another is worth it (1,000): at 1-2
 * KiB of garbage per request that is at least a few MiB to reclaim, while a
 * collection marks the whole live heap (about 100 ms of a helper thread's
 * CPU at 1,000,000 items), so a trickle of requests (a health check every
 * few seconds) never triggers one.
 */
export const idleGcRequestsMin = 1000;

/** setTimeout/clearTimeout, injected so tests fire the timer by hand. */
export interface IdleTimers {
  set(callback: () => void, delayMs: number): unknown;
  clear(handle: unknown): void;
}

/** "hint": ask for a concurrent collection; "full": collect now, blocking. */
export type IdleGcKind = "hint" | "full";

export interface IdleGcOptions {
  timers: IdleTimers;
  /** Called at most once per stage per quiet spell; `requests` counts those since the previous hint. */
  collect: (kind: IdleGcKind, requests: number) => void;
  /** Resident memory in bytes now (process.memoryUsage.rss in production). */
  residentBytes: () => number;
  idleMs?: number;
  fullIdleMs?: number;
  requestsMin?: number;
}

export class IdleGc {
  private readonly idleMs: number;
  private readonly fullIdleMs: number;
  private readonly requestsMin: number;
  /** Requests since the last hint (or since start). */
  private requests = 0;
  /** `requests` when the timer was last armed; unchanged when it fires = a quiet interval. */
  private requestsAtArm = 0;
  private handle: unknown = null;
  private stopped = false;
  /** Resident bytes measured right after the last hint. */
  private residentAtHintBytes = 0;

  constructor(private readonly options: IdleGcOptions) {
    this.idleMs = options.idleMs ?? idleGcIdleMs;
    this.fullIdleMs = options.fullIdleMs ?? idleGcFullIdleMs;
    this.requestsMin = options.requestsMin ?? idleGcRequestsMin;
  }

  /** One answered request. The hot path: keep it to a counter and a flag. */
  noteRequest(): void {
    this.requests += 1;
    if (this.handle === null && !this.stopped) this.arm();
  }

  /** Whether a check is pending (for tests and stats). */
  get armed(): boolean {
    return this.handle !== null;
  }

  /** Cancels any pending check; later requests arm nothing. */
  stop(): void {
    this.stopped = true;
    if (this.handle !== null) this.options.timers.clear(this.handle);
    this.handle = null;
  }

  private arm(): void {
    this.requestsAtArm = this.requests;
    this.handle = this.options.timers.set(() => this.onTimer(), this.idleMs);
  }

  private onTimer(): void {
    this.handle = null;
    if (this.stopped) return;
    if (this.requests !== this.requestsAtArm) {
      // Traffic during the interval: look again one interval later.
      this.arm();
      return;
    }
    // A whole interval without a request. Hint only after enough requests; otherwise stay disarmed until the next one.
    if (this.requests < this.requestsMin) return;
    const requests = this.requests;
    this.requests = 0;
    this.requestsAtArm = 0;
    this.options.collect("hint", requests);
    this.residentAtHintBytes = this.options.residentBytes();
    // Stage 2 stays armed through any traffic (noteRequest sees a timer and arms nothing), and decides when it fires.
    this.handle = this.options.timers.set(() => this.onFullTimer(), this.fullIdleMs);
  }

  private onFullTimer(): void {
    this.handle = null;
    if (this.stopped) return;
    if (this.requests === 0) {
      const fallen = this.options.residentBytes() <= this.residentAtHintBytes * (1 - idleGcFallenFraction);
      if (!fallen) this.options.collect("full", 0);
      return;
    }
    // Requests came after the hint: back to watching for the next quiet interval; they count towards the next hint.
    this.arm();
  }
}
