// The server's one timer: armed for the engine's earliest deadline (delays,
// leases, TTLs, waiter timeouts), it calls engine.tick and re-arms. Nothing
// else in the server owns a timer for engine work.

import type { EngineApi } from "../engine/api.ts";
import type { Clock } from "../lib/clock.ts";

/** setTimeout's largest delay; a later deadline is simply re-checked then. */
const timerDelayMsMax = 2 ** 31 - 1;

export class DeadlineTimer {
  private handle: ReturnType<typeof setTimeout> | null = null;
  private armedForMs: number | null = null;
  private stopped = false;

  constructor(
    private readonly engine: Pick<EngineApi, "tick" | "nextDeadlineMs">,
    private readonly clock: Clock,
  ) {}

  /** Call after anything that may have added an earlier deadline. */
  rearm(): void {
    if (this.stopped) return;
    const nextMs = this.engine.nextDeadlineMs();
    if (nextMs === null) return;
    if (this.armedForMs !== null && this.armedForMs <= nextMs) return;
    if (this.handle !== null) clearTimeout(this.handle);
    const delayMs = Math.min(Math.max(nextMs - this.clock.nowMs(), 0), timerDelayMsMax);
    this.armedForMs = nextMs;
    this.handle = setTimeout(() => this.fire(), delayMs);
  }

  stop(): void {
    this.stopped = true;
    if (this.handle !== null) clearTimeout(this.handle);
    this.handle = null;
    this.armedForMs = null;
  }

  private fire(): void {
    this.handle = null;
    this.armedForMs = null;
    this.engine.tick(this.clock.nowMs());
    this.rearm();
  }
}
