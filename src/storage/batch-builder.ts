// Turning the write sets gathered for one commit into one CommitBatch: item
// writes grouped per shard (a later write to the same key takes the earlier
// one's place: the last write wins, at the first one's position), outcome
// writes likewise per id, pause and policy writes per (ns, topic, group), acked items into one
// acked-log record (and each one's delete among its shard's writes), and the
// largest acked-log purge bound asked for.

import { assert } from "../lib/assert.ts";
import { type AckedLogRecord, emptyAckedLog } from "./acked-log.ts";
import type { ItemRecord, MetaRecord, OutcomeRecord } from "./record.ts";
import { pauseKey, policyKey, scheduleKey } from "./store.ts";
import type { CommitBatch, ItemKey, PauseWrite, PolicyWrite, ScheduleWrite, ShardBatch } from "./store.ts";
import { type WriteLog, WriteKind } from "./write-log.ts";

/** A write set as the builder reads it: its writes in the order made, null when none. */
export interface SetWrites {
  readonly log: WriteLog | null;
}

export class BatchBuilder {
  /** Scratch, empty between batches: per shard its writes and where each key sits among them. */
  private readonly shards: Array<ShardBatch | undefined> = [];
  private readonly slots: Array<Map<ItemKey, number> | undefined> = [];
  private readonly outcomeSlots = new Map<string, number>();
  /** Scratch: each namespace's index in the batch's acked-log record. */
  private readonly ackedNamespaces = new Map<string, number>();
  /** The batch being built (build() sets them, add() fills them). */
  private outcomes: Array<{ id: string; record: OutcomeRecord | null }> = [];
  private acked: AckedLogRecord | null = null;
  private ackedPurgeBeforeMs: number | null = null;
  /** Pauses and policies are rare: a Map per batch that has any, last write per key wins. */
  private pauses: Map<string, PauseWrite> | null = null;
  private policies: Map<string, PolicyWrite> | null = null;
  private schedules: Map<string, ScheduleWrite> | null = null;

  build(sets: readonly SetWrites[], meta: MetaRecord | null): CommitBatch {
    this.outcomes = [];
    this.acked = null;
    this.ackedPurgeBeforeMs = null;
    this.pauses = null;
    this.policies = null;
    this.schedules = null;
    for (const set of sets) {
      const log = set.log;
      if (log !== null) for (let index = 0; index < log.count; index++) this.add(log, index);
    }
    const byShard = this.shards;
    const shards: ShardBatch[] = [];
    for (let shard = 0; shard < byShard.length; shard++) {
      const shardBatch = byShard[shard];
      if (shardBatch === undefined) continue;
      shards.push(shardBatch);
      byShard[shard] = undefined;
      (this.slots[shard] as Map<ItemKey, number>).clear();
    }
    this.outcomeSlots.clear();
    this.ackedNamespaces.clear();
    const batch: CommitBatch = { shards, outcomes: this.outcomes, meta, acked: this.acked, ackedPurgeBeforeMs: this.ackedPurgeBeforeMs };
    // (Casts: the compiler keeps both maps narrowed to the null set above, though add() sets them.)
    const pauses = this.pauses as Map<string, PauseWrite> | null;
    if (pauses !== null) batch.pauses = [...pauses.values()];
    const policies = this.policies as Map<string, PolicyWrite> | null;
    if (policies !== null) batch.policies = [...policies.values()];
    const schedules = this.schedules as Map<string, ScheduleWrite> | null;
    if (schedules !== null) batch.schedules = [...schedules.values()];
    this.schedules = null;
    this.outcomes = [];
    this.acked = null;
    this.pauses = null;
    this.policies = null;
    return batch;
  }

  /** Write `index` of `log` into the batch. */
  private add(log: WriteLog, index: number): void {
    const kind = log.kinds[index];
    if (kind === WriteKind.item) {
      this.addItem(log.shards[index] as number, log.keys[index] as ItemKey, log.records[index] as ItemRecord | Uint8Array | null);
    } else if (kind === WriteKind.acked) {
      const shard = log.shards[index] as number;
      const key = log.keys[index] as ItemKey;
      const ns = log.names[index] as string;
      const endedAtMs = log.timesMs[index] as number;
      const acked = (this.acked ??= emptyAckedLog());
      let nsIndex = this.ackedNamespaces.get(ns);
      if (nsIndex === undefined) {
        nsIndex = acked.namespaces.length;
        this.ackedNamespaces.set(ns, nsIndex);
        acked.namespaces.push(ns);
      }
      acked.nsIndexes.push(nsIndex);
      acked.shards.push(shard);
      acked.keys.push(key);
      if (endedAtMs > acked.endedAtMs) acked.endedAtMs = endedAtMs;
      // The ack deletes its item: that delete is its entry among its shard's writes.
      this.addItem(shard, key, null);
    } else if (kind === WriteKind.outcome) {
      this.addOutcome(log.names[index] as string, log.records[index] as OutcomeRecord | null);
    } else if (kind === WriteKind.pause) {
      const write = log.records[index] as PauseWrite;
      (this.pauses ??= new Map()).set(pauseKey(write.ns, write.topic, write.group), write);
    } else if (kind === WriteKind.policy) {
      const write = log.records[index] as PolicyWrite;
      (this.policies ??= new Map()).set(policyKey(write.ns, write.topic, write.group), write);
    } else if (kind === WriteKind.schedule) {
      const write = log.records[index] as ScheduleWrite;
      (this.schedules ??= new Map()).set(scheduleKey(write.ns, write.name), write);
    } else {
      assert(kind === WriteKind.purgeAcked, "unknown write kind");
      this.ackedPurgeBeforeMs = Math.max(this.ackedPurgeBeforeMs ?? 0, log.timesMs[index] as number);
    }
  }

  private addOutcome(id: string, record: OutcomeRecord | null): void {
    const slot = this.outcomeSlots.get(id);
    if (slot === undefined) {
      this.outcomeSlots.set(id, this.outcomes.length);
      this.outcomes.push({ id, record });
    } else {
      (this.outcomes[slot] as { id: string; record: OutcomeRecord | null }).record = record;
    }
  }

  /**
   * An item write goes straight into its shard's parallel key and record
   * lists; the index maps (reused across batches) find an earlier write to
   * the same key, whose record it replaces in place: the last write wins, at
   * the first one's position. No object per write.
   */
  private addItem(shard: number, key: ItemKey, record: ItemRecord | Uint8Array | null): void {
    let shardBatch = this.shards[shard];
    if (shardBatch === undefined) {
      shardBatch = { shard, keys: [], records: [] };
      this.shards[shard] = shardBatch;
    }
    let seen = this.slots[shard];
    if (seen === undefined) {
      seen = new Map();
      this.slots[shard] = seen;
    }
    const slot = seen.get(key);
    if (slot === undefined) {
      seen.set(key, shardBatch.keys.length);
      shardBatch.keys.push(key);
      shardBatch.records.push(record);
    } else {
      shardBatch.records[slot] = record;
    }
  }
}
