// One commit's writes, encoded before the LMDB transaction starts, in the
// caller's turn: a bad record is a programmer error, must not leave half a
// batch behind, and must throw an AssertionError that stops the process
// rather than become a rejected commit that would look like a storage
// failure. Every value goes into one buffer (the slab) and is written as a
// view of it: lmdb-js looks up the address of each value's ArrayBuffer, and a
// separate small array per value made the engine materialise an ArrayBuffer
// for each (about 0.5 µs a value, measured in the drain profile). The slab
// and the list of item writes are kept from one commit to the next
// (commit-slabs.ts): no buffer and no object per write for each commit.

import { assert } from "../../lib/assert.ts";
import type { ByteWriter } from "../byte-cursor.ts";
import { appendItemRecord, appendItemValue, appendOutcomeRecord, encodeMetaRecord, encodePauseRecord, encodePolicyRecord, encodeScheduleRecord } from "../record-codec.ts";
import { pauseKey, policyKey, scheduleKey } from "../store.ts";
import type { ItemRecord } from "../record.ts";
import type { CommitBatch, ItemKey } from "../store.ts";
import { type SweptKeys, noSweptKeys } from "./ack-sweep.ts";
import type { CommitSlabs } from "./commit-slabs.ts";
import { pauseKeyPrefix, policyKeyPrefix, scheduleKeyPrefix } from "./lmdb-options.ts";

/** Slab bytes reserved per write up front (the slab grows past it when values are larger). */
const slabBytesPerWrite = 256;

export interface CommitPlan {
  slab: ByteWriter;
  /** Item puts (slab range) and deletes (start -1), in batch order: four numbers each (shard, key, start, end). */
  itemWrites: number[];
  outcomeWrites: Array<{ id: string; start: number; end: number }>;
  metaBytes: Uint8Array | null;
  /** Pause and policy writes: each a key of the `meta` sub-database and its value, or null to delete. */
  metaKeyWrites: Array<{ key: string; bytes: Uint8Array | null }>;
  /**
   * Acked items whose deletes wait in the ack sweep (ack-sweep.ts): the
   * batch's acked-log record already ends them, on disk as in memory.
   */
  deferred: SweptKeys;
}

/** The plan of `batch`, encoded into a slab from `slabs` (given back if encoding throws; the store gives it back after the transaction). */
export function planCommit(batch: CommitBatch, slabs: CommitSlabs): CommitPlan {
  let writes = batch.outcomes.length;
  for (const shardBatch of batch.shards) writes += shardBatch.keys.length;
  const slab = slabs.take(writes * slabBytesPerWrite);
  try {
    return encodePlan(batch, slab, slabs.itemWritesFor(slab), writes);
  } catch (error) {
    slabs.release(slab);
    throw error;
  }
}

function encodePlan(batch: CommitBatch, slab: ByteWriter, itemWrites: number[], writes: number): CommitPlan {
  const acked = batch.acked;
  const ackedKeys = acked != null && acked.keys.length > 0 ? new Set(acked.keys) : null;
  const ackedAtMs = acked != null ? acked.endedAtMs : 0;
  const deferred = noSweptKeys();
  for (const { shard, keys, records } of batch.shards) {
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index] as ItemKey;
      const record = records[index] as ItemRecord | Uint8Array | null;
      const start = slab.length;
      if (record === null) {
        if (ackedKeys !== null && ackedKeys.has(key)) {
          deferred.shards.push(shard);
          deferred.keys.push(key);
          deferred.ackedAtMs.push(ackedAtMs);
        } else {
          itemWrites.push(shard, key, -1, -1);
        }
        continue;
      }
      if (record instanceof Uint8Array) appendItemValue(slab, record);
      else appendItemRecord(slab, record);
      itemWrites.push(shard, key, start, slab.length);
    }
  }
  const outcomeWrites: CommitPlan["outcomeWrites"] = [];
  for (const { id, record } of batch.outcomes) {
    const start = slab.length;
    if (record === null) {
      outcomeWrites.push({ id, start: -1, end: -1 });
      continue;
    }
    appendOutcomeRecord(slab, record);
    outcomeWrites.push({ id, start, end: slab.length });
  }
  const metaBytes = batch.meta === null ? null : encodeMetaRecord(batch.meta);
  const metaKeyWrites: CommitPlan["metaKeyWrites"] = [];
  for (const { ns, topic, group, record } of batch.pauses ?? []) {
    metaKeyWrites.push({ key: pauseKeyPrefix + pauseKey(ns, topic, group), bytes: record === null ? null : encodePauseRecord(record) });
  }
  for (const { ns, topic, group, record } of batch.policies ?? []) {
    metaKeyWrites.push({ key: policyKeyPrefix + policyKey(ns, topic, group), bytes: record === null ? null : encodePolicyRecord(record) });
  }
  for (const { ns, name, record } of batch.schedules ?? []) {
    metaKeyWrites.push({ key: scheduleKeyPrefix + scheduleKey(ns, name), bytes: record === null ? null : encodeScheduleRecord(record) });
  }
  assert(itemWrites.length / 4 + deferred.keys.length <= writes, "commit plan wrote more items than the batch holds");
  return { slab, itemWrites, outcomeWrites, metaBytes, metaKeyWrites, deferred };
}
