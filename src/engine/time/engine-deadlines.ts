// The engine's deadline queue, typed: the union of every kind of deadline
// with what it fires on. Each owner declares its own deadline type
// (state/item-parts.ts, ops/waiters.ts, outcomes/outcome-table.ts, ready/topic.ts), so the generic
// queue (deadlines.ts) imports none of them. The two kinds without a target
// are declared here: their owners (outcomes/ended-items.ts, deferred-lease-writes.ts)
// take the queue from this file, which may therefore not import them. A
// tick's switch on `kind` narrows `target` to the right type, with no cast.

import type { Deadline, DeadlineKind, DeadlineQueue } from "./deadlines.ts";
import type { LiveItem, LiveItemDeadline } from "../state/item.ts";
import type { OutcomeDeadline } from "../outcomes/outcome-table.ts";
import type { PauseDeadline } from "../ready/topic.ts";
import type { WaiterDeadline } from "../ops/waiters.ts";
import type { ItemWaitDeadline } from "../ops/item-wait.ts";
import type { GroupPauseDeadline, RefillDeadline } from "../groups/group.ts";

/** The one AckedRetention deadline (outcomes/ended-items.ts): the oldest block of acked outcomes reaches the retention. */
export type AckedRetentionDeadline = Deadline<typeof DeadlineKind.AckedRetention, null>;

/** The one LeaseWrites deadline (deferred-lease-writes.ts): deferred lease writes are due. */
export type LeaseWritesDeadline = Deadline<typeof DeadlineKind.LeaseWrites, null>;

export type EngineDeadline =
  | LiveItemDeadline
  | WaiterDeadline
  | ItemWaitDeadline
  | OutcomeDeadline
  | PauseDeadline<LiveItem>
  | GroupPauseDeadline<LiveItem>
  | RefillDeadline
  | AckedRetentionDeadline
  | LeaseWritesDeadline;

export type EngineDeadlines = DeadlineQueue<EngineDeadline>;

/** The deadlines ItemStates handles: all but waiter timeouts and pause ends, which maintenance.ts hands to their owners. */
export type ItemStatesDeadline = LiveItemDeadline | OutcomeDeadline | AckedRetentionDeadline | LeaseWritesDeadline;
