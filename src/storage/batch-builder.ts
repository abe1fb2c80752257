// Turning the write sets gathered for one commit into one CommitBatch: item
// writes grouped per shard (a later write to the same key takes the earlier
// one's place: the last write wins, at the first one's position), outcome
// writes likewise per id, pause writes per (ns, topic), acked items into one
// acked-log record, and the largest acked-log purge bound asked for.

import { type AckedLogRecord, emptyAckedLog } from "./acked-log.ts";
import type { ItemRecord, MetaRecord, OutcomeRecord, PauseRecord } from "./record.ts";
import { pauseKey } from "./store.ts";
import type { CommitBatch, ItemKey, ShardBatch } from "./store.ts";

/** One write of a WriteSet, in the order made. */
export type Operation =
  | { kind: "item"; shard: number; key: ItemKey; record: ItemRecord | Uint8Array | null }
  | { kind: "outcome"; id: string; record: OutcomeRecord | null }
  | { kind: "acked"; ns: string; shard: number; key: ItemKey; endedAtMs: number }
  | { kind: "purgeAcked"; beforeMs: number }
  | { kind: "pause"; ns: string; topic: string; record: PauseRecord | null };

export class BatchBuilder {
  /** Scratch, empty between batches: per shard its items and where each key sits among them. */
  private readonly shards: Array<ShardBatch["items"] | undefined> = [];
  private readonly slots: Array<Map<ItemKey, number> | undefined> = [];
  private readonly outcomeSlots = new Map<string, number>();
  /** Scratch: each namespace's index in the batch's acked-log record. */
  private readonly ackedNamespaces = new Map<string, number>();

  build(sets: ReadonlyArray<{ readonly operations: readonly Operation[] }>, meta: MetaRecord | null): CommitBatch {
    // Each write goes straight into its shard's list; the index maps (reused
    // across batches) find an earlier write to the same key, which takes the
    // later value in its own place: the last write wins, at the first one's
    // position. No per-write objects: an item write's operation is its entry.
    const byShard = this.shards;
    const slots = this.slots;
    const outcomeSlots = this.outcomeSlots;
    const outcomes: Array<{ id: string; record: OutcomeRecord | null }> = [];
    const nsSlots = this.ackedNamespaces;
    let acked: AckedLogRecord | null = null;
    let ackedPurgeBeforeMs: number | null = null;
    // Pauses are rare: a Map per batch that has any, last write per key wins.
    let pauses: Map<string, { ns: string; topic: string; record: PauseRecord | null }> | null = null;
    for (const set of sets) {
      for (const operation of set.operations) {
        if (operation.kind === "acked") {
          if (acked === null) acked = emptyAckedLog();
          let nsIndex = nsSlots.get(operation.ns);
          if (nsIndex === undefined) {
            nsIndex = acked.namespaces.length;
            nsSlots.set(operation.ns, nsIndex);
            acked.namespaces.push(operation.ns);
          }
          acked.nsIndexes.push(nsIndex);
          acked.shards.push(operation.shard);
          acked.keys.push(operation.key);
          if (operation.endedAtMs > acked.endedAtMs) acked.endedAtMs = operation.endedAtMs;
        } else if (operation.kind === "pause") {
          pauses ??= new Map();
          pauses.set(pauseKey(operation.ns, operation.topic), { ns: operation.ns, topic: operation.topic, record: operation.record });
        } else if (operation.kind === "purgeAcked") {
          ackedPurgeBeforeMs = Math.max(ackedPurgeBeforeMs ?? 0, operation.beforeMs);
        } else if (operation.kind === "item") {
          const shard = operation.shard;
          let items = byShard[shard];
          if (items === undefined) {
            items = [];
            byShard[shard] = items;
          }
          let seen = slots[shard];
          if (seen === undefined) {
            seen = new Map();
            slots[shard] = seen;
          }
          const slot = seen.get(operation.key);
          if (slot === undefined) {
            seen.set(operation.key, items.length);
            // The operation is the entry (it has key and record): no object per write.
            items.push(operation);
          } else {
            items[slot] = { key: operation.key, record: operation.record };
          }
        } else {
          const slot = outcomeSlots.get(operation.id);
          if (slot === undefined) {
            outcomeSlots.set(operation.id, outcomes.length);
            outcomes.push({ id: operation.id, record: operation.record });
          } else {
            (outcomes[slot] as { id: string; record: OutcomeRecord | null }).record = operation.record;
          }
        }
      }
    }
    const shards: ShardBatch[] = [];
    for (let shard = 0; shard < byShard.length; shard++) {
      const items = byShard[shard];
      if (items === undefined) continue;
      shards.push({ shard, items });
      byShard[shard] = undefined;
      (slots[shard] as Map<ItemKey, number>).clear();
    }
    outcomeSlots.clear();
    nsSlots.clear();
    const batch: CommitBatch = { shards, outcomes, meta, acked, ackedPurgeBeforeMs };
    if (pauses !== null) batch.pauses = [...pauses.values()];
    return batch;
  }
}
