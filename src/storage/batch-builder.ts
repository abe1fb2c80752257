// Turning the write sets gathered for one commit into one CommitBatch: item
// writes grouped per shard (a later write to the same key takes the earlier
// one's place: the last write wins, at the first one's position), outcome
// writes likewise per id, pause writes per (ns, topic), acked items into one
// acked-log record (and each one's delete among its shard's writes), and the
// largest acked-log purge bound asked for.

import { type AckedLogRecord, emptyAckedLog } from "./acked-log.ts";
import type { ItemRecord, MetaRecord, OutcomeRecord, PauseRecord } from "./record.ts";
import { pauseKey } from "./store.ts";
import type { CommitBatch, ItemKey, ShardBatch } from "./store.ts";

/** One write of a WriteSet, in the order made. An ack ("acked") deletes its item too: it is that delete's entry in its shard's list. */
export type Operation =
  | { kind: "item"; shard: number; key: ItemKey; record: ItemRecord | Uint8Array | null }
  | { kind: "outcome"; id: string; record: OutcomeRecord | null }
  | { kind: "acked"; ns: string; shard: number; key: ItemKey; endedAtMs: number; record: null }
  | { kind: "purgeAcked"; beforeMs: number }
  | { kind: "pause"; ns: string; topic: string; record: PauseRecord | null };

/** A write set as the builder reads it: its first write, and any others in order. */
export interface SetOperations {
  readonly firstOperation: Operation | null;
  readonly moreOperations: readonly Operation[] | null;
}

export class BatchBuilder {
  /** Scratch, empty between batches: per shard its items and where each key sits among them. */
  private readonly shards: Array<ShardBatch["items"] | undefined> = [];
  private readonly slots: Array<Map<ItemKey, number> | undefined> = [];
  private readonly outcomeSlots = new Map<string, number>();
  /** Scratch: each namespace's index in the batch's acked-log record. */
  private readonly ackedNamespaces = new Map<string, number>();
  /** The batch being built (build() sets them, add() fills them). */
  private outcomes: Array<{ id: string; record: OutcomeRecord | null }> = [];
  private acked: AckedLogRecord | null = null;
  private ackedPurgeBeforeMs: number | null = null;
  /** Pauses are rare: a Map per batch that has any, last write per key wins. */
  private pauses: Map<string, { ns: string; topic: string; record: PauseRecord | null }> | null = null;

  build(sets: readonly SetOperations[], meta: MetaRecord | null): CommitBatch {
    this.outcomes = [];
    this.acked = null;
    this.ackedPurgeBeforeMs = null;
    this.pauses = null;
    for (const set of sets) {
      if (set.firstOperation !== null) this.add(set.firstOperation);
      const more = set.moreOperations;
      if (more !== null) for (const operation of more) this.add(operation);
    }
    const byShard = this.shards;
    const shards: ShardBatch[] = [];
    for (let shard = 0; shard < byShard.length; shard++) {
      const items = byShard[shard];
      if (items === undefined) continue;
      shards.push({ shard, items });
      byShard[shard] = undefined;
      (this.slots[shard] as Map<ItemKey, number>).clear();
    }
    this.outcomeSlots.clear();
    this.ackedNamespaces.clear();
    const batch: CommitBatch = { shards, outcomes: this.outcomes, meta, acked: this.acked, ackedPurgeBeforeMs: this.ackedPurgeBeforeMs };
    // (A cast: the compiler keeps this.pauses narrowed to the null set above, though add() sets it.)
    const pauses = this.pauses as Map<string, { ns: string; topic: string; record: PauseRecord | null }> | null;
    if (pauses !== null) batch.pauses = [...pauses.values()];
    this.outcomes = [];
    this.acked = null;
    this.pauses = null;
    return batch;
  }

  private add(operation: Operation): void {
    if (operation.kind === "acked") {
      const acked = (this.acked ??= emptyAckedLog());
      let nsIndex = this.ackedNamespaces.get(operation.ns);
      if (nsIndex === undefined) {
        nsIndex = acked.namespaces.length;
        this.ackedNamespaces.set(operation.ns, nsIndex);
        acked.namespaces.push(operation.ns);
      }
      acked.nsIndexes.push(nsIndex);
      acked.shards.push(operation.shard);
      acked.keys.push(operation.key);
      if (operation.endedAtMs > acked.endedAtMs) acked.endedAtMs = operation.endedAtMs;
      this.addItem(operation);
    } else if (operation.kind === "pause") {
      (this.pauses ??= new Map()).set(pauseKey(operation.ns, operation.topic), { ns: operation.ns, topic: operation.topic, record: operation.record });
    } else if (operation.kind === "purgeAcked") {
      this.ackedPurgeBeforeMs = Math.max(this.ackedPurgeBeforeMs ?? 0, operation.beforeMs);
    } else if (operation.kind === "item") {
      this.addItem(operation);
    } else {
      const slot = this.outcomeSlots.get(operation.id);
      if (slot === undefined) {
        this.outcomeSlots.set(operation.id, this.outcomes.length);
        this.outcomes.push({ id: operation.id, record: operation.record });
      } else {
        (this.outcomes[slot] as { id: string; record: OutcomeRecord | null }).record = operation.record;
      }
    }
  }

  /**
   * An item write goes straight into its shard's list; the index maps (reused
   * across batches) find an earlier write to the same key, which takes the
   * later value in its own place: the last write wins, at the first one's
   * position. No per-write objects: an item write's operation is its entry.
   */
  private addItem(operation: { shard: number; key: ItemKey; record: ItemRecord | Uint8Array | null }): void {
    const shard = operation.shard;
    let items = this.shards[shard];
    if (items === undefined) {
      items = [];
      this.shards[shard] = items;
    }
    let seen = this.slots[shard];
    if (seen === undefined) {
      seen = new Map();
      this.slots[shard] = seen;
    }
    const slot = seen.get(operation.key);
    if (slot === undefined) {
      seen.set(operation.key, items.length);
      items.push(operation);
    } else {
      items[slot] = { key: operation.key, record: operation.record };
    }
  }
}
