// Recovery as `orq serve` runs it: Engine.recoverInSteps, with a turn of the
// event loop after every step (so the HTTP port answers /healthz and signals
// are seen while millions of items load) and a progress line about once a
// second. The turn and the stopwatch are passed in, so a test can act between
// steps and drive the progress lines with its own time.

import { Engine, type EngineOptions } from "../engine/engine.ts";
import type { Clock } from "../lib/clock.ts";
import type { RecoveryLog } from "./recovery-log.ts";

export interface RecoveryTurns {
  log: RecoveryLog;
  /** Monotonic time for the progress lines. */
  stopwatch: Clock;
  /** Resolves after the event loop has turned (the server passes setImmediate). */
  turn: () => Promise<void>;
}

export async function recoverInTurns(options: EngineOptions, turns: RecoveryTurns): Promise<Engine> {
  const steps = Engine.recoverInSteps(options);
  for (;;) {
    const next = steps.next();
    if (next.done === true) {
      turns.log.end(turns.stopwatch.nowMs());
      return next.value;
    }
    turns.log.step(next.value, turns.stopwatch.nowMs());
    await turns.turn();
  }
}
