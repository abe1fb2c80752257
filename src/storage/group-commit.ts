// The GroupCommitter: the engine's Writer. Write sets ended in the same
// event-loop turn join one CommitBatch; while a commit is in flight the next
// batch gathers, and it starts the moment the previous one finishes, so one
// commit (and one fsync) carries as many requests as arrived meanwhile
// (FOQS-style group commit). Writes to the same (shard, key) or outcome id in
// a batch coalesce to the last. Each shard has a circuit breaker fed by the
// commit results; a write set touching an open shard is refused at end().
//
// Item keys come from one counter, reserved in blocks: the block's end
// (meta.keysReservedBelow) rides in every commit from the reservation until
// one succeeds, so an item never commits before the reservation covering its
// key, and after a restart keys continue above everything handed out.

import { assert } from "../lib/assert.ts";
import type { Clock } from "../lib/clock.ts";
import { CircuitBreakers } from "./circuit-breaker.ts";
import type { BreakerOptions, BreakerState } from "./circuit-breaker.ts";
import { RecentSamples } from "./commit-stats.ts";
import type { CommitStats } from "./commit-stats.ts";
import type { ItemRecord, MetaRecord, OutcomeRecord, PauseRecord } from "./record.ts";
import { pauseKey } from "./store.ts";
import type { CommitBatch, CommitResult, ItemKey, ShardBatch, Store } from "./store.ts";
import { StorageUnavailableError } from "./writer.ts";
import type { WriteSet, Writer } from "./writer.ts";

/** Keys reserved per meta write (10,000): one meta write per 10,000 items, and a restart skips at most 10,000 keys. */
export const keyBlockSizeDefault = 10_000;
/** Write sets waiting for a commit (100,000): beyond it the disk cannot keep up and new writes are refused. */
export const pendingWriteSetsMax = 100_000;
/** Retry hint when no one shard is to blame (queue full, outcome part failed) (250 ms): about the time a slow commit takes. */
const sharedRetryAfterMs = 250;
/** Largest item key: keys are stored as 64 bits but handled as JS numbers. */
const itemKeyMax = Number.MAX_SAFE_INTEGER;

export interface GroupCommitterOptions {
  /** Time for the circuit breakers (ManualClock in tests). */
  clock: Clock;
  breaker?: Partial<BreakerOptions>;
  keyBlockSize?: number;
  /**
   * Times commit durations for commitStats() and the breakers' slow-commit
   * rule; defaults to `clock`. The CLI passes a monotonic, sub-millisecond one.
   */
  stopwatch?: Clock;
}

type Operation =
  | { kind: "item"; shard: number; key: ItemKey; record: ItemRecord | Uint8Array | null }
  | { kind: "outcome"; id: string; record: OutcomeRecord | null }
  | { kind: "pause"; ns: string; topic: string; record: PauseRecord | null };

interface Deferred {
  resolve(): void;
  reject(error: Error): void;
}

class PendingWriteSet implements WriteSet {
  readonly operations: Operation[] = [];
  readonly shards = new Set<number>();
  /** Writes outcomes or pauses: the part of a commit outside every shard (CommitResult.metaError). */
  writesOutcomes = false;
  ended = false;
  deferred: Deferred | null = null;

  constructor(private readonly committer: GroupCommitter) {}

  putItem(shard: number, key: ItemKey, record: ItemRecord): void {
    this.add({ kind: "item", shard, key, record });
  }

  putItemBytes(shard: number, key: ItemKey, value: Uint8Array): void {
    this.add({ kind: "item", shard, key, record: value });
  }

  deleteItem(shard: number, key: ItemKey): void {
    this.add({ kind: "item", shard, key, record: null });
  }

  putOutcome(id: string, record: OutcomeRecord): void {
    this.add({ kind: "outcome", id, record });
  }

  deleteOutcome(id: string): void {
    this.add({ kind: "outcome", id, record: null });
  }

  putPause(record: PauseRecord): void {
    this.add({ kind: "pause", ns: record.ns, topic: record.topic, record });
  }

  deletePause(ns: string, topic: string): void {
    this.add({ kind: "pause", ns, topic, record: null });
  }

  end(): Promise<void> {
    assert(!this.ended, "WriteSet ended twice");
    this.ended = true;
    return this.committer.enqueue(this);
  }

  private add(operation: Operation): void {
    assert(!this.ended, "write to an ended WriteSet");
    if (operation.kind === "item") {
      // Messages are built only on failure: this runs for every write.
      if (!(operation.shard >= 0 && operation.shard < this.committer.shardCount)) assert(false, `shard ${operation.shard} out of range`);
      if (!(Number.isSafeInteger(operation.key) && operation.key >= 0)) assert(false, `bad item key ${operation.key}`);
      this.shards.add(operation.shard);
    } else {
      this.writesOutcomes = true;
    }
    this.operations.push(operation);
  }
}

export class GroupCommitter implements Writer {
  readonly shardCount: number;
  private readonly clock: Clock;
  private readonly stopwatch: Clock;
  private readonly breakers: CircuitBreakers;
  private readonly keyBlockSize: number;
  private readonly baseMeta: MetaRecord;

  private nextKeyValue: number;
  private keysReservedBelow: number;
  private keysReservedBelowCommitted: number;

  private pending: PendingWriteSet[] = [];
  private flushScheduled = false;
  private inFlight = false;
  private idleWaiters: Array<() => void> = [];

  private commitsTotal = 0;
  private commitFailuresTotal = 0;
  private writeSetsRejectedTotal = 0;
  private readonly writeSetsPerCommit = new RecentSamples();
  private readonly recordsPerCommit = new RecentSamples();
  private readonly commitMs = new RecentSamples();
  /** buildBatch's scratch, empty between batches: per shard its items and where each key sits among them. */
  private readonly scratchShards: Array<ShardBatch["items"] | undefined> = [];
  private readonly scratchSlots: Array<Map<ItemKey, number> | undefined> = [];
  private readonly scratchOutcomeSlots = new Map<string, number>();

  constructor(
    private readonly store: Store,
    options: GroupCommitterOptions,
  ) {
    this.shardCount = store.shardCount;
    this.clock = options.clock;
    this.stopwatch = options.stopwatch ?? options.clock;
    this.breakers = new CircuitBreakers(store.shardCount, options.breaker);
    this.keyBlockSize = options.keyBlockSize ?? keyBlockSizeDefault;
    assert(Number.isSafeInteger(this.keyBlockSize) && this.keyBlockSize >= 1, "keyBlockSize must be >= 1");
    this.baseMeta = store.meta;
    this.nextKeyValue = this.baseMeta.keysReservedBelow;
    this.keysReservedBelow = this.baseMeta.keysReservedBelow;
    this.keysReservedBelowCommitted = this.baseMeta.keysReservedBelow;
  }

  begin(): WriteSet {
    return new PendingWriteSet(this);
  }

  nextKey(): ItemKey {
    if (this.nextKeyValue >= this.keysReservedBelow) {
      this.keysReservedBelow = Math.min(itemKeyMax, this.nextKeyValue + this.keyBlockSize);
      assert(this.keysReservedBelow > this.nextKeyValue, "item keys exhausted");
    }
    const key = this.nextKeyValue;
    this.nextKeyValue++;
    return key;
  }

  shardHealth(shard: number, nowMs: number): { available: true } | { available: false; retryAfterMs: number } {
    return this.breakers.health(shard, nowMs);
  }

  /** Breaker state per shard, for metrics. */
  breakerStates(nowMs: number): BreakerState[] {
    return Array.from({ length: this.shardCount }, (_, shard) => this.breakers.state(shard, nowMs));
  }

  drain(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  commitStats(): CommitStats {
    return {
      commitsTotal: this.commitsTotal,
      commitFailuresTotal: this.commitFailuresTotal,
      writeSetsRejectedTotal: this.writeSetsRejectedTotal,
      writeSetsPerCommit: this.writeSetsPerCommit.toArray(),
      recordsPerCommit: this.recordsPerCommit.toArray(),
      commitMs: this.commitMs.toArray(),
    };
  }

  /** Called by WriteSet.end(). */
  enqueue(set: PendingWriteSet): Promise<void> {
    if (set.operations.length === 0) return Promise.resolve();
    const nowMs = this.clock.nowMs();
    // Check every shard before admitting any: admitting turns a half-open
    // breaker into probing, which must not happen for a set then refused.
    for (const shard of set.shards) {
      const health = this.breakers.health(shard, nowMs);
      if (!health.available) return this.refuse(`shard ${shard} is unavailable (storage failing)`, shard, health.retryAfterMs);
    }
    if (this.pending.length >= pendingWriteSetsMax) {
      return this.refuse("too many writes waiting for storage", null, sharedRetryAfterMs);
    }
    for (const shard of set.shards) this.breakers.admit(shard, nowMs);
    const promise = new Promise<void>((resolve, reject) => {
      set.deferred = { resolve, reject };
    });
    this.pending.push(set);
    this.scheduleCommit();
    return promise;
  }

  private refuse(message: string, shard: number | null, retryAfterMs: number): Promise<void> {
    this.writeSetsRejectedTotal++;
    return Promise.reject(new StorageUnavailableError(message, shard, retryAfterMs));
  }

  private scheduleCommit(): void {
    if (this.flushScheduled || this.inFlight) return;
    this.flushScheduled = true;
    // setImmediate runs after every I/O callback of this loop iteration, so all
    // requests read in one turn share the commit.
    setImmediate(() => {
      this.flushScheduled = false;
      this.startCommit();
    });
  }

  private startCommit(): void {
    if (this.inFlight || this.pending.length === 0) {
      this.notifyIfIdle();
      return;
    }
    const sets = this.pending;
    this.pending = [];
    const batch = this.buildBatch(sets);
    this.inFlight = true;
    const startedMs = this.stopwatch.nowMs();
    this.store.commit(batch).then(
      (result) => this.finishCommit(sets, batch, result, startedMs),
      // The Store contract says commit never rejects; if one does, treat it as
      // a failure of everything in the batch rather than losing the promises.
      (error: unknown) => this.finishCommit(sets, batch, everythingFailed(batch, error), startedMs),
    );
  }

  private buildBatch(sets: readonly PendingWriteSet[]): CommitBatch {
    // Each write goes straight into its shard's list; the index maps (reused
    // across batches) find an earlier write to the same key, which takes the
    // later value in its own place: the last write wins, at the first one's
    // position. No per-write objects beyond the batch entries themselves.
    const byShard = this.scratchShards;
    const slots = this.scratchSlots;
    const outcomeSlots = this.scratchOutcomeSlots;
    const outcomes: Array<{ id: string; record: OutcomeRecord | null }> = [];
    // Pauses are rare: a Map per batch that has any, last write per key wins.
    let pauses: Map<string, { ns: string; topic: string; record: PauseRecord | null }> | null = null;
    for (const set of sets) {
      for (const operation of set.operations) {
        if (operation.kind === "item") {
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
            items.push({ key: operation.key, record: operation.record });
          } else {
            (items[slot] as ShardBatch["items"][number]).record = operation.record;
          }
        } else if (operation.kind === "pause") {
          pauses ??= new Map();
          pauses.set(pauseKey(operation.ns, operation.topic), { ns: operation.ns, topic: operation.topic, record: operation.record });
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
    const meta = this.keysReservedBelow > this.keysReservedBelowCommitted ? { ...this.baseMeta, keysReservedBelow: this.keysReservedBelow } : null;
    return pauses === null ? { shards, outcomes, meta } : { shards, outcomes, meta, pauses: [...pauses.values()] };
  }

  private finishCommit(sets: readonly PendingWriteSet[], batch: CommitBatch, result: CommitResult, startedMs: number): void {
    const durationMs = Math.max(0, this.stopwatch.nowMs() - startedMs);
    const nowMs = this.clock.nowMs();
    this.inFlight = false;
    this.commitsTotal++;
    if (result.failedShards.size > 0 || result.metaError !== null) this.commitFailuresTotal++;
    this.writeSetsPerCommit.add(sets.length);
    this.recordsPerCommit.add(batch.shards.reduce((sum, shardBatch) => sum + shardBatch.items.length, 0) + batch.outcomes.length);
    this.commitMs.add(durationMs);

    for (const { shard } of batch.shards) this.breakers.record(shard, nowMs, !result.failedShards.has(shard), durationMs);
    if (batch.meta !== null && result.metaError === null) {
      this.keysReservedBelowCommitted = Math.max(this.keysReservedBelowCommitted, batch.meta.keysReservedBelow);
    }

    for (const set of sets) {
      const deferred = set.deferred;
      assert(deferred !== null);
      const failure = this.failureFor(set, result, nowMs);
      if (failure === null) deferred.resolve();
      else deferred.reject(failure);
    }
    // The next batch gathered while this one was in flight: start it now.
    this.startCommit();
  }

  private failureFor(set: PendingWriteSet, result: CommitResult, nowMs: number): StorageUnavailableError | null {
    for (const shard of set.shards) {
      const error = result.failedShards.get(shard);
      if (error !== undefined) {
        return new StorageUnavailableError(`shard ${shard} commit failed: ${error.message}`, shard, this.breakers.retryAfterMs(shard, nowMs));
      }
    }
    if (set.writesOutcomes && result.metaError !== null) {
      return new StorageUnavailableError(`outcome commit failed: ${result.metaError.message}`, null, sharedRetryAfterMs);
    }
    return null;
  }

  private isIdle(): boolean {
    return this.pending.length === 0 && !this.inFlight && !this.flushScheduled;
  }

  private notifyIfIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

function everythingFailed(batch: CommitBatch, error: unknown): CommitResult {
  const failure = error instanceof Error ? error : new Error(String(error));
  const failedShards = new Map<number, Error>();
  for (const { shard } of batch.shards) failedShards.set(shard, failure);
  return { failedShards, metaError: failure };
}
