// Namespaces kept only in memory (`"durability": "memory"` in the config),
// beside durable ones, with the engine unchanged. Two wrappers share one
// MemoryItems:
//
// - MemoryNamespaceStore wraps the durable Store the engine reads: an item
//   of an in-memory namespace is read from memory, everything else (and all
//   of recovery) from the durable store. A restart finds no in-memory item.
// - MemoryNamespaceWriter wraps the durable Writer (the GroupCommitter) the
//   engine writes through: each write of an in-memory namespace is kept
//   aside in its set and applied to memory when the set closes; every other
//   write goes to the durable set. A set with nothing durable settles at
//   once, so an in-memory namespace's replies wait for no commit.
//
// What an in-memory namespace writes and where it goes:
// - items (putItem names the namespace; putItemBytes, deleteItem and
//   ackItem of a key memory holds stay in memory): kept in MemoryItems,
//   which the engine reads back when it delivers or shows an item;
// - outcomes, acked-log entries, pauses and policies: dropped. The store
//   holds them only for recovery (the engine keeps its own copies), and
//   recovery must not find them;
// - deleteOutcome carries no namespace: it goes to the durable store, where
//   deleting an id never written there changes nothing.
// Items of a namespace switched to memory that are already on disk are
// durable items: they stay on disk until they end.

import { assert } from "../../lib/assert.ts";
import type { AckedLogRecord } from "../acked-log.ts";
import type { Availability } from "../circuit-breaker.ts";
import { decodeItemRecord, encodeItemRecord } from "../record-codec.ts";
import type { ItemRecord, MetaRecord, OutcomeRecord, PauseRecord, PolicyRecord, ScheduleRecord } from "../record.ts";
import type { CommitBatch, CommitResult, ItemKey, LoadedShard, Store } from "../store.ts";
import type { Commit, WriteSet, Writer } from "../writer.ts";

/** The items of in-memory namespaces: encoded values by key, one map per shard. */
export class MemoryItems {
  private readonly shards: Array<Map<ItemKey, Uint8Array>>;
  /** Moves by 2 at each set applied, so a read-ahead taken before it no longer stands (Writer.commitGeneration). */
  generation = 0;

  constructor(
    shardCount: number,
    private readonly namespaces: ReadonlySet<string>,
  ) {
    this.shards = Array.from({ length: shardCount }, () => new Map<ItemKey, Uint8Array>());
  }

  isMemoryNamespace(ns: string): boolean {
    return this.namespaces.has(ns);
  }

  holds(shard: number, key: ItemKey): boolean {
    return this.shard(shard).has(key);
  }

  get(shard: number, key: ItemKey): Uint8Array | undefined {
    return this.shard(shard).get(key);
  }

  set(shard: number, key: ItemKey, value: Uint8Array | null): void {
    if (value === null) this.shard(shard).delete(key);
    else this.shard(shard).set(key, value);
  }

  private shard(shard: number): Map<ItemKey, Uint8Array> {
    const items = this.shards[shard];
    assert(items !== undefined, `shard ${shard} out of range`);
    return items;
  }
}

/** The durable Store, with the items of in-memory namespaces read from memory. */
export class MemoryNamespaceStore implements Store {
  readonly shardCount: number;
  readonly setLiveKeyFloor?: (floorOf: (shard: number) => number) => void;
  readonly prefetchItems?: (shard: number, keys: readonly ItemKey[]) => void;

  constructor(
    private readonly durable: Store,
    private readonly memory: MemoryItems,
  ) {
    this.shardCount = durable.shardCount;
    if (durable.setLiveKeyFloor !== undefined) this.setLiveKeyFloor = (floorOf) => durable.setLiveKeyFloor?.(floorOf);
    if (durable.prefetchItems !== undefined) this.prefetchItems = (shard, keys) => durable.prefetchItems?.(shard, keys);
  }

  get meta(): MetaRecord {
    return this.durable.meta;
  }

  loadShards(options?: { bytes: boolean }): Iterable<LoadedShard> {
    return this.durable.loadShards(options);
  }

  loadOutcomes(): Iterable<{ id: string; record: OutcomeRecord }> {
    return this.durable.loadOutcomes();
  }

  loadAckedLog(): Iterable<AckedLogRecord> {
    return this.durable.loadAckedLog();
  }

  loadPauses(): Iterable<PauseRecord> {
    return this.durable.loadPauses();
  }

  loadPolicies(): Iterable<PolicyRecord> {
    return this.durable.loadPolicies();
  }

  loadSchedules(): Iterable<ScheduleRecord> {
    return this.durable.loadSchedules();
  }

  storedCounts(): { items: number; outcomes: number } {
    return this.durable.storedCounts();
  }

  readItem(shard: number, key: ItemKey): ItemRecord | null {
    const value = this.memory.get(shard, key);
    return value === undefined ? this.durable.readItem(shard, key) : decodeItemRecord(value);
  }

  readItemBytes(shard: number, key: ItemKey): Uint8Array | null {
    const value = this.memory.get(shard, key);
    return value === undefined ? this.durable.readItemBytes(shard, key) : value.slice();
  }

  commit(batch: CommitBatch): Promise<CommitResult> {
    return this.durable.commit(batch);
  }

  close(): Promise<void> {
    return this.durable.close();
  }
}

/** The durable Writer, with the writes of in-memory namespaces applied to memory when their set closes. */
export class MemoryNamespaceWriter implements Writer {
  readonly shardCount: number;

  constructor(
    private readonly durable: Writer,
    private readonly memory: MemoryItems,
  ) {
    this.shardCount = durable.shardCount;
  }

  begin(): WriteSet {
    return new SplitWriteSet(this.durable.begin(), this.memory);
  }

  nextKey(): ItemKey {
    return this.durable.nextKey();
  }

  drain(): Promise<void> {
    return this.durable.drain();
  }

  get commitGeneration(): number {
    // Odd while a durable commit is in flight, as the durable writer's; moves when memory changes too.
    return this.durable.commitGeneration + this.memory.generation;
  }

  setIdleListener(listener: (() => void) | null): void {
    this.durable.setIdleListener(listener);
  }

  writable(shard: number, nowMs: number): Availability {
    return this.durable.writable(shard, nowMs);
  }

  allWritable(nowMs: number): boolean {
    return this.durable.allWritable(nowMs);
  }
}

/**
 * One request's writes: those of in-memory namespaces kept aside (parallel
 * lists, made at the first), applied in order when the set closes; the rest
 * in the durable set, which settles at once when it holds none.
 */
class SplitWriteSet implements WriteSet {
  private shards: number[] | null = null;
  private keys: ItemKey[] | null = null;
  private values: Array<Uint8Array | null> | null = null;

  constructor(
    private readonly durable: WriteSet,
    private readonly memory: MemoryItems,
  ) {}

  putItem(shard: number, key: ItemKey, record: ItemRecord): void {
    // Encoded now, as the durable store encodes in the caller's turn: a bad record throws here.
    if (this.memory.isMemoryNamespace(record.ns)) this.keep(shard, key, encodeItemRecord(record));
    else this.durable.putItem(shard, key, record);
  }

  putItemBytes(shard: number, key: ItemKey, value: Uint8Array): void {
    if (this.inMemory(shard, key)) this.keep(shard, key, value);
    else this.durable.putItemBytes(shard, key, value);
  }

  deleteItem(shard: number, key: ItemKey): void {
    if (this.inMemory(shard, key)) this.keep(shard, key, null);
    else this.durable.deleteItem(shard, key);
  }

  putOutcome(id: string, record: OutcomeRecord): void {
    if (!this.memory.isMemoryNamespace(record.ns)) this.durable.putOutcome(id, record);
  }

  deleteOutcome(id: string): void {
    this.durable.deleteOutcome(id);
  }

  ackItem(ns: string, shard: number, key: ItemKey, endedAtMs: number): void {
    if (this.inMemory(shard, key)) this.keep(shard, key, null);
    else this.durable.ackItem(ns, shard, key, endedAtMs);
  }

  purgeAckedBefore(beforeMs: number): void {
    this.durable.purgeAckedBefore(beforeMs);
  }

  putPause(record: PauseRecord): void {
    if (!this.memory.isMemoryNamespace(record.ns)) this.durable.putPause(record);
  }

  deletePause(ns: string, topic: string, group: string | null): void {
    if (!this.memory.isMemoryNamespace(ns)) this.durable.deletePause(ns, topic, group);
  }

  putPolicy(record: PolicyRecord): void {
    if (!this.memory.isMemoryNamespace(record.ns)) this.durable.putPolicy(record);
  }

  deletePolicy(ns: string, topic: string, group: string | null): void {
    if (!this.memory.isMemoryNamespace(ns)) this.durable.deletePolicy(ns, topic, group);
  }

  // A memory namespace's schedules are dropped with its policies: a restart empties the namespace.
  putSchedule(record: ScheduleRecord, shard: number): void {
    if (!this.memory.isMemoryNamespace(record.ns)) this.durable.putSchedule(record, shard);
  }

  deleteSchedule(ns: string, name: string, shard: number): void {
    if (!this.memory.isMemoryNamespace(ns)) this.durable.deleteSchedule(ns, name, shard);
  }

  end(): Promise<void> {
    return this.close().promise();
  }

  close(): Commit {
    this.applyKept();
    return this.durable.close();
  }

  /** An item memory holds, or one this set put there and has not applied yet. */
  private inMemory(shard: number, key: ItemKey): boolean {
    if (this.memory.holds(shard, key)) return true;
    const keys = this.keys;
    if (keys === null) return false;
    for (let i = keys.length - 1; i >= 0; i--) if (keys[i] === key && this.shards?.[i] === shard) return true;
    return false;
  }

  private keep(shard: number, key: ItemKey, value: Uint8Array | null): void {
    (this.shards ??= []).push(shard);
    (this.keys ??= []).push(key);
    (this.values ??= []).push(value);
  }

  private applyKept(): void {
    const keys = this.keys;
    if (keys === null) return;
    const shards = this.shards as number[];
    const values = this.values as Array<Uint8Array | null>;
    for (let i = 0; i < keys.length; i++) this.memory.set(shards[i] as number, keys[i] as ItemKey, values[i] ?? null);
    this.memory.generation += 2;
  }
}
