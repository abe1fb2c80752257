// One schedule as the engine holds it: its stored record (last tick
// included), its tick rule, the shard it belongs to, and its next tick on the
// deadline heap. Also the item template: the enqueue input each tick copies,
// kept in the record as a map of EnqueueItem's request fields, so fields
// added to items later need no change here.

import type { HeapNode } from "../../lib/pairing-heap.ts";
import type { ScheduleRecord } from "../../storage/record.ts";
import type { EnqueueItemInput } from "../api.ts";
import { EnqueueItem } from "../ops/enqueue-item.ts";
import type { Deadline, DeadlineKind } from "../time/deadlines.ts";
import type { TickRule } from "./tick-rule.ts";

export type ScheduleDeadline = Deadline<typeof DeadlineKind.ScheduleTick, Schedule>;

export class Schedule {
  /** The next tick's entry on the deadline heap, or null when the schedule has no next tick. */
  timer: HeapNode<ScheduleDeadline> | null = null;

  constructor(
    /** As stored: replaced (never changed in place) when a tick or a `schedule` writes it. */
    public record: ScheduleRecord,
    readonly rule: TickRule,
    /** The shard the schedule belongs to: its record's, and in cluster mode its ticks' items'. */
    readonly shard: number,
    /** Where each tick's item goes (-1: any healthy shard, as an unplaced item). */
    readonly itemShard: number,
  ) {}

  get nextAtMs(): number | null {
    return this.timer === null ? null : this.timer.value.atMs;
  }
}

/**
 * EnqueueItem's fields that are the record's, not the request's: never part
 * of a template. `key` and `after` are refused in a schedule's item, and
 * deliver_at_ms (an absolute instant) would put every tick's item at one time.
 */
const notTemplateFields: ReadonlySet<string> = new Set([
  "ns",
  "enqueuedAtMs",
  "ttlExpiresAtMs",
  "attempt",
  "deliveries",
  "leaseBoot",
  "state",
  "leaseExpiresAtMs",
  "deadReason",
  "commit",
  "key",
  "after",
  "deliverAtMs",
]);

/** The template of an item as the server decoded it: its request fields that are set. */
export function templateOf(item: EnqueueItemInput): Record<string, unknown> {
  const template: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(item)) {
    if (value === null || value === undefined || notTemplateFields.has(field)) continue;
    template[field] = value;
  }
  return template;
}

/** A new item for one tick: the template's fields over EnqueueItem's defaults, with the tick's key. */
export function itemOfTemplate(template: Readonly<Record<string, unknown>>, key: string): EnqueueItem {
  const item = new EnqueueItem();
  const fields = item as unknown as Record<string, unknown>;
  for (const [field, value] of Object.entries(template)) {
    // Only fields EnqueueItem has: a template stored by a later build may carry more.
    if (field in item && !notTemplateFields.has(field)) fields[field] = value;
  }
  item.key = key;
  return item;
}

/** The idempotency key of a tick (the contract's): a tick enqueues at most one item. */
export function tickKey(name: string, tickAtMs: number): string {
  return `schedule:${name}:${tickAtMs}`;
}
