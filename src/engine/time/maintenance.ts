// The engine's timed work: pop the deadlines that are due (delays, leases,
// TTLs, waiter timeouts, outcome retention, pause ends, rate refills) and act on each, at most
// deadlinesPerTickMax per call so one tick never stalls the event loop (the
// server's one timer calls again for the rest). Ops run this first too, so an
// op sees the state at its own nowMs even when the timer is late.

import { assert } from "../../lib/assert.ts";
import { DeadlineKind } from "./deadlines.ts";
import type { LiveItem } from "../state/item.ts";
import type { EngineDeadlines } from "./engine-deadlines.ts";
import type { ItemStates } from "../state/item-states.ts";
import type { TopicPause } from "../ready/topic.ts";
import type { Waiter } from "../ops/waiters.ts";
import type { ItemWait } from "../ops/item-wait.ts";
import type { GroupPause, RefillTarget } from "../groups/group.ts";

/** Handle up to `max` due deadlines; item changes go to one background WriteSet nobody waits on. */
export function runDueDeadlines(
  states: ItemStates,
  deadlines: EngineDeadlines,
  max: number,
  timeOut: (waiter: Waiter) => void,
  endPause: (pause: TopicPause<LiveItem>) => void,
  endGroupPause: (pause: GroupPause<LiveItem>) => void,
  refill: (target: RefillTarget, nowMs: number) => void,
  nowMs: number,
  timeOutWait: (wait: ItemWait) => void = () => {},
): void {
  assert(!states.setOpen, "engine: tick inside an op");
  for (let handled = 0; handled < max; handled++) {
    const deadline = deadlines.popDue(nowMs);
    if (deadline === null) break;
    if (deadline.kind === DeadlineKind.WaiterTimeout) timeOut(deadline.target);
    else if (deadline.kind === DeadlineKind.PauseEnd) endPause(deadline.target);
    else if (deadline.kind === DeadlineKind.GroupPauseEnd) endGroupPause(deadline.target);
    else if (deadline.kind === DeadlineKind.BoundRefill) refill(deadline.target, nowMs);
    else if (deadline.kind === DeadlineKind.ItemWaitTimeout) timeOutWait(deadline.target);
    else states.handleDeadline(deadline, nowMs);
  }
  states.endSetBackground();
}
