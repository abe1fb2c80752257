// A write set's writes in the order made, kept flat: per write a kind code
// and its fields, in parallel arrays indexed by the write's position, not an
// object per write, which would be one JS-heap cell per enqueued item and per
// ack (docs/decisions/017-patched-writes.md). The GroupCommitter keeps a pool
// of logs (WriteLogPool): a write set takes one at its first write and gives
// it back, emptied, once its batch is built or it is refused, so a warm
// server records writes into arrays it already has.

import { writeLogs } from "../limits.ts";
import type { ItemRecord, OutcomeRecord } from "./record.ts";
import type { ItemKey, PauseWrite, PolicyWrite, ScheduleWrite } from "./store.ts";

/** What a write does; which columns it fills is listed beside each. */
export const WriteKind = {
  /** shards, keys, records (ItemRecord, its stored bytes, or null to delete). */
  item: 0,
  /** names (the outcome id), records (OutcomeRecord or null to delete). */
  outcome: 1,
  /** names (the namespace), shards, keys, timesMs (endedAtMs): the item is acked and its record deleted. */
  acked: 2,
  /** timesMs (the acked-log purge bound). */
  purgeAcked: 3,
  /** records (the PauseWrite: its scope, and its record or null to delete). */
  pause: 4,
  /** records (the PolicyWrite: its scope, and its record or null to delete). */
  policy: 5,
  /** records (the ScheduleWrite: its name and shard, and its record or null to delete). */
  schedule: 6,
} as const;
export type WriteKind = (typeof WriteKind)[keyof typeof WriteKind];

/** A column's value for a write that has none (numbers are kept numeric, so the arrays stay unboxed). */
const none = 0;

export class WriteLog {
  /** Writes recorded: slots 0..count-1 of every column are this set's. */
  count = 0;
  readonly kinds: WriteKind[] = [];
  readonly shards: number[] = [];
  readonly keys: ItemKey[] = [];
  readonly timesMs: number[] = [];
  readonly names: Array<string | null> = [];
  /** Pauses and policies are rare: each keeps its whole write (scope and record) here rather than a column per field of its scope. */
  readonly records: Array<ItemRecord | Uint8Array | OutcomeRecord | PauseWrite | PolicyWrite | ScheduleWrite | null> = [];

  item(shard: number, key: ItemKey, record: ItemRecord | Uint8Array | null): void {
    this.push(WriteKind.item, shard, key, none, null, record);
  }

  outcome(id: string, record: OutcomeRecord | null): void {
    this.push(WriteKind.outcome, none, none, none, id, record);
  }

  acked(ns: string, shard: number, key: ItemKey, endedAtMs: number): void {
    this.push(WriteKind.acked, shard, key, endedAtMs, ns, null);
  }

  purgeAcked(beforeMs: number): void {
    this.push(WriteKind.purgeAcked, none, none, beforeMs, null, null);
  }

  pause(write: PauseWrite): void {
    this.push(WriteKind.pause, none, none, none, null, write);
  }

  policy(write: PolicyWrite): void {
    this.push(WriteKind.policy, none, none, none, null, write);
  }

  schedule(write: ScheduleWrite): void {
    this.push(WriteKind.schedule, none, none, none, null, write);
  }

  /** Forget every write, dropping the references (records hold payloads) so a pooled log pins nothing. */
  clear(): void {
    for (let index = 0; index < this.count; index++) {
      this.names[index] = null;
      this.records[index] = null;
    }
    this.count = 0;
  }

  private push(
    kind: WriteKind,
    shard: number,
    key: ItemKey,
    timeMs: number,
    name: string | null,
    record: ItemRecord | Uint8Array | OutcomeRecord | PauseWrite | PolicyWrite | ScheduleWrite | null,
  ): void {
    // Every column gets a value at every slot: the arrays stay dense, and a slot reused from an earlier set holds nothing of it.
    const index = this.count;
    this.kinds[index] = kind;
    this.shards[index] = shard;
    this.keys[index] = key;
    this.timesMs[index] = timeMs;
    this.names[index] = name;
    this.records[index] = record;
    this.count = index + 1;
  }
}

/** Logs kept for reuse, at most writeLogs.pooledWritesMax write slots among them (src/limits/memory.ts). */
export class WriteLogPool {
  private readonly free: WriteLog[] = [];
  /** Slots held by the logs in `free` (a log's columns are as long as the most writes it ever held). */
  private freeWrites = 0;

  take(): WriteLog {
    const log = this.free.pop();
    if (log === undefined) return new WriteLog();
    this.freeWrites -= log.kinds.length;
    return log;
  }

  /** `log` is done with (its batch is built, or its set refused): cleared, and kept unless that would pass writeLogs.pooledWritesMax. */
  give(log: WriteLog): void {
    log.clear();
    const slots = log.kinds.length;
    if (this.freeWrites + slots > writeLogs.pooledWritesMax) return;
    this.freeWrites += slots;
    this.free.push(log);
  }
}
