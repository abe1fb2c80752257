// How ended items ended, kept for outcome_retention_ms for `get` and `after`:
// acked ends compactly (acked-outcomes.ts, one acked-log record per commit on
// disk), cancelled and expired ends one entry each (outcome-table.ts, one
// outcome record each on disk: they are rare, and one may replace another).
// Owns both retention deadlines and the writes that record and forget ends.

import type { HeapNode } from "../../lib/pairing-heap.ts";
import type { Limits } from "../../limits.ts";
import type { Outcome } from "../../storage/record.ts";
import type { ItemKey } from "../../storage/store.ts";
import type { WriteSet } from "../../storage/writer.ts";
import { AckedOutcomes } from "./acked-outcomes.ts";
import { Deadline, DeadlineKind } from "../time/deadlines.ts";
import type { AckedRetentionDeadline, EngineDeadlines } from "../time/engine-deadlines.ts";
import { formatId, parseId } from "../state/ids.ts";
import { type OutcomeDeadline, OutcomeTable, RetainedOutcome } from "./outcome-table.ts";

/** What others may read of the ended items (ItemStates.ended): how an item ended, and counts. */
export type ReadonlyEndedItems = Pick<EndedItems, "size" | "outcomeOf" | "outcomeOfId" | "resultOf" | "resultCount" | "resultBytes" | "checkInvariants">;

export class EndedItems {
  /** Cancelled and expired ends, one entry each. */
  readonly outcomes = new OutcomeTable();
  readonly acked: AckedOutcomes;
  /** The one AckedRetention deadline, while acked outcomes are retained. */
  private ackedTimer: HeapNode<AckedRetentionDeadline> | null = null;

  constructor(
    /** Unused since acked outcomes are kept by key alone (acked-outcomes.ts); kept so callers need not change. */
    _shardCount: number,
    private readonly deadlines: EngineDeadlines,
    private readonly limits: Pick<Limits, "outcomeRetentionMs">,
  ) {
    this.acked = new AckedOutcomes();
  }

  /** Outcomes retained, of every kind. */
  get size(): number {
    return this.outcomes.size + this.acked.size;
  }

  /**
   * How an ended item ended, while its outcome is retained; `ns` null matches
   * any namespace. An acked end is found by key alone (keys are unique in the
   * store), so an id with the right key and another shard also answers acked.
   */
  outcomeOf(ns: string | null, shard: number, key: ItemKey): Outcome | undefined {
    const retained = this.outcomes.getByKey(shard, key);
    if (retained !== undefined) return ns === null || retained.ns === ns ? retained.outcome : undefined;
    return this.acked.has(ns, key) ? "acked" : undefined;
  }

  /** The `ack` result an acked item of `ns` was given, while retained; null when none. */
  resultOf(ns: string, shard: number, key: ItemKey): Uint8Array | null {
    const retained = this.outcomes.getByKey(shard, key);
    return retained !== undefined && retained.ns === ns ? retained.result : null;
  }

  /** Retained `ack` results, and their bytes. */
  get resultCount(): number {
    return this.outcomes.resultCount;
  }

  get resultBytes(): number {
    return this.outcomes.resultBytes;
  }

  /** outcomeOf for an id string (a malformed id has no outcome). */
  outcomeOfId(ns: string | null, id: string): Outcome | undefined {
    const parsed = parseId(id);
    return parsed === null ? undefined : this.outcomeOf(ns, parsed.shard, parsed.key);
  }

  /**
   * Remember an item's end and write it into `set`: the item's delete and its
   * outcome. An acked item with a `result` is kept as an outcome entry and
   * record of its own, which holds the result (outcome-table.ts).
   */
  record(ns: string, shard: number, key: ItemKey, outcome: Outcome, nowMs: number, set: WriteSet, result: Uint8Array | null = null): void {
    if (outcome === "acked" && result === null) {
      // A few bytes in memory and in this commit's acked-log record (acked-outcomes.ts says why); ackItem deletes the item too.
      this.acked.add(ns, key, nowMs);
      set.ackItem(ns, shard, key, nowMs);
      this.scheduleAckedRetention();
      return;
    }
    set.deleteItem(shard, key);
    // The entry is the record written too: one object per ended item.
    const retained = new RetainedOutcome(shard, key, ns, outcome, nowMs, result);
    set.putOutcome(formatId(shard, key), retained);
    this.retain(retained);
  }

  /** An outcome record recovered from the store (recovery/recovery.ts). */
  restore(retained: RetainedOutcome): void {
    this.retain(retained);
  }

  /** An acked outcome recovered from the store's acked log (recovery/recovery.ts). */
  restoreAcked(ns: string, key: ItemKey, endedAtMs: number): void {
    this.acked.add(ns, key, endedAtMs);
    this.scheduleAckedRetention();
  }

  /**
   * Cluster mode: the shard moved to another node. Its outcome entries go,
   * with their retention deadlines, and nothing is written (the new owner
   * keeps them). Acked ends stay: they are kept by key alone (no shard to
   * tell them by), and an acked end stays true wherever its shard is served;
   * they go at their retention, and a later adoption of the shard does not
   * count them twice (recovery/shard-moves.ts).
   */
  dropShard(shard: number): void {
    for (const entry of this.outcomes.shardEntries(shard)) {
      this.outcomes.delete(entry);
      if (entry.node !== null && entry.node.inHeap) this.deadlines.cancel(entry.node);
    }
  }

  /** An OutcomeRetention or AckedRetention deadline is due: forget what it covers, in memory and on disk. */
  handleDeadline(deadline: OutcomeDeadline | AckedRetentionDeadline, nowMs: number, set: () => WriteSet): void {
    if (deadline.kind === DeadlineKind.OutcomeRetention) {
      const outcome = deadline.target;
      this.outcomes.delete(outcome);
      set().deleteOutcome(outcome.id);
      return;
    }
    this.ackedTimer = null;
    const cutoffMs = nowMs - this.limits.outcomeRetentionMs;
    if (this.acked.expire(cutoffMs) > 0) set().purgeAckedBefore(cutoffMs + 1);
    this.scheduleAckedRetention();
  }

  checkInvariants(): void {
    this.acked.checkInvariants();
  }

  private retain(retained: RetainedOutcome): void {
    retained.node = this.deadlines.schedule(new Deadline(retained.endedAtMs + this.limits.outcomeRetentionMs, DeadlineKind.OutcomeRetention, retained));
    const previous = this.outcomes.set(retained);
    if (previous !== undefined) this.deadlines.cancel(previous.node as HeapNode<OutcomeDeadline>);
  }

  /** Arm the one AckedRetention deadline for the oldest acked block, unless armed or nothing is retained. */
  private scheduleAckedRetention(): void {
    if (this.ackedTimer !== null && this.ackedTimer.inHeap) return;
    const oldest = this.acked.oldestNewestEndedAtMs();
    if (oldest === null) return;
    this.ackedTimer = this.deadlines.schedule(new Deadline(oldest + this.limits.outcomeRetentionMs, DeadlineKind.AckedRetention, null));
  }
}
