// The GroupCommitter: the engine's Writer. Write sets ended in the same
// event-loop turn join one CommitBatch; while a commit is in flight the next
// batch gathers, and it starts the moment the previous one finishes, so one
// commit (and one fsync) carries as many requests as arrived meanwhile
// (FOQS-style group commit). Writes to the same (shard, key) or outcome id in
// a batch coalesce to the last. The store has one circuit breaker, fed by the
// commit results and opened by failed commits only; while it is open a write
// set is refused at end(). Slow commits are reported (slow-commits.ts), never refused.
//
// Item keys come from one counter, reserved in blocks: the block's end
// (meta.keysReservedBelow) rides in every commit from the reservation until
// one succeeds, so an item never commits before the reservation covering its
// key, and after a restart keys continue above everything handed out.

import { AssertionError, assert } from "../lib/assert.ts";
import { pendingWriteSetsMax } from "../limits.ts";
import type { Clock } from "../lib/clock.ts";
import { CircuitBreaker } from "./circuit-breaker.ts";
import type { Availability, BreakerOptions, BreakerState, BreakerTransition } from "./circuit-breaker.ts";
import { RecentSamples } from "./commit-stats.ts";
import type { CommitStats } from "./commit-stats.ts";
import { BatchBuilder } from "./batch-builder.ts";
import { SlowCommitReporter, type SlowCommitReport, slowCommitReportIntervalMs } from "./slow-commits.ts";
import type { MetaRecord } from "./record.ts";
import type { CommitBatch, CommitResult, ItemKey, Store } from "./store.ts";
import { StorageUnavailableError } from "./writer.ts";
import { PendingWriteSet } from "./pending-write-set.ts";
import { type WriteLog, WriteLogPool } from "./write-log.ts";
import type { WriteSet, Writer } from "./writer.ts";

/** Keys reserved per meta write (10,000): one meta write per 10,000 items, and a restart skips at most 10,000 keys. */
const keyBlockSizeDefault = 10_000;
/** Retry hint when too many write sets wait for a commit (250 ms): about the time a slow commit takes. */
const sharedRetryAfterMs = 250;

/** Largest item key: keys are stored as 64 bits but handled as JS numbers. */
const itemKeyMax = Number.MAX_SAFE_INTEGER;

/** What storage tells the server's log (the server logs each at warn level): every refusal a client sees has a line. */
export interface StorageEvents {
  breakerTransition(transition: BreakerTransition): void;
  slowCommits(report: SlowCommitReport): void;
  /** Write sets refused because pendingWriteSetsMax were waiting: at most one report per slowCommitReportIntervalMs, counting the refusals since the last. */
  queueFull(report: { refused: number; pendingWriteSetsMax: number }): void;
}

export interface GroupCommitterOptions {
  /** Time for the circuit breaker (ManualClock in tests). */
  clock: Clock;
  breaker?: Partial<BreakerOptions>;
  keyBlockSize?: number;
  /**
   * Times commit durations for commitStats() and the slow-commit reports;
   * defaults to `clock`. The CLI passes a monotonic, sub-millisecond one.
   */
  stopwatch?: Clock;
  /** Where breaker transitions and slow commits are reported; nowhere by default. */
  events?: Partial<StorageEvents>;
}



export class GroupCommitter implements Writer {
  readonly shardCount: number;
  private readonly clock: Clock;
  private readonly stopwatch: Clock;
  private readonly breaker: CircuitBreaker;
  private readonly events: Partial<StorageEvents>;
  private readonly slowCommits: SlowCommitReporter;
  private queueFullRefused = 0;
  private queueFullReportedAtMs = Number.NEGATIVE_INFINITY;
  private readonly keyBlockSize: number;
  private readonly baseMeta: MetaRecord;

  private nextKeyValue: number;
  private keysReservedBelow: number;
  private keysReservedBelowCommitted: number;

  private pending: PendingWriteSet[] = [];
  private flushScheduled = false;
  /** Moves as each commit starts and lands, so it is odd while one is in flight (Writer.commitGeneration). */
  private generation = 0;
  private idleWaiters: Array<() => void> = [];
  private idleListener: (() => void) | null = null;

  private commitsTotal = 0;
  private commitFailuresTotal = 0;
  private writeSetsRejectedTotal = 0;
  private readonly writeSetsPerCommit = new RecentSamples();
  private readonly recordsPerCommit = new RecentSamples();
  private readonly commitMs = new RecentSamples();
  private readonly batchBuilder = new BatchBuilder();
  /** Where write sets record their writes: logs reused from set to set, so a write allocates nothing. */
  private readonly writeLogs = new WriteLogPool();

  constructor(
    private readonly store: Store,
    options: GroupCommitterOptions,
  ) {
    this.shardCount = store.shardCount;
    this.clock = options.clock;
    this.stopwatch = options.stopwatch ?? options.clock;
    this.events = options.events ?? {};
    this.breaker = new CircuitBreaker(options.breaker, (transition) => this.events.breakerTransition?.(transition));
    this.slowCommits = new SlowCommitReporter((report) => this.events.slowCommits?.(report));
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

  /** For PendingWriteSet: a log for a set's writes, given back (releaseLog) once its batch is built or it is refused. */
  takeLog(): WriteLog {
    return this.writeLogs.take();
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

  /** Every shard alike: one LMDB transaction covers them all, so the store's one breaker speaks for each. */
  writable(shard: number, nowMs: number): Availability {
    if (!(shard >= 0 && shard < this.shardCount)) assert(false, `shard ${shard} out of range`);
    return this.breaker.health(nowMs);
  }

  allWritable(_nowMs: number): boolean {
    // Closed is the only state in which every write is admitted (half-open admits one probe).
    return this.breaker.closed;
  }

  /** The store breaker's state, for metrics. */
  breakerState(nowMs: number): BreakerState {
    return this.breaker.state(nowMs);
  }

  get commitGeneration(): number {
    return this.generation;
  }

  setIdleListener(listener: (() => void) | null): void {
    this.idleListener = listener;
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

  /** Called by WriteSet.close(): the set joins the next commit, or settles now (nothing to write, or refused). */
  enqueue(set: PendingWriteSet): void {
    if (set.log === null) {
      set.settle(null);
      return;
    }
    const nowMs = this.clock.nowMs();
    // Check the queue before admitting: admitting turns a half-open breaker
    // into probing, which must not happen for a set then refused.
    if (this.pending.length >= pendingWriteSetsMax) {
      this.noteQueueFull(nowMs);
      this.releaseLog(set);
      set.settle(this.refuse("too many writes waiting for storage", null, sharedRetryAfterMs));
      return;
    }
    if (!this.breaker.closed) {
      const health = this.breaker.admit(nowMs);
      if (!health.available) {
        this.releaseLog(set);
        set.settle(this.refuse(health.reason, null, health.retryAfterMs));
        return;
      }
    }
    this.pending.push(set);
    this.scheduleCommit();
  }

  private releaseLog(set: PendingWriteSet): void {
    const log = set.releaseLog();
    if (log !== null) this.writeLogs.give(log);
  }

  private noteQueueFull(nowMs: number): void {
    this.queueFullRefused++;
    if (nowMs - this.queueFullReportedAtMs < slowCommitReportIntervalMs) return;
    this.events.queueFull?.({ refused: this.queueFullRefused, pendingWriteSetsMax });
    this.queueFullReportedAtMs = nowMs;
    this.queueFullRefused = 0;
  }

  private refuse(message: string, shard: number | null, retryAfterMs: number): StorageUnavailableError {
    this.writeSetsRejectedTotal++;
    return new StorageUnavailableError(message, shard, retryAfterMs);
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
    // The batch holds what it needs: the sets' logs go back to the pool for the next sets.
    for (const set of sets) this.releaseLog(set);
    this.generation++;
    const startedMs = this.stopwatch.nowMs();
    // Store.commit encodes (and so checks) the batch before it returns its
    // promise: a record that breaks an invariant throws an AssertionError here,
    // in this turn, and stops the process (lib/assert.ts) rather than being
    // reported as a storage failure.
    this.store.commit(batch).then(
      (result) => this.finishCommit(sets, batch, result, startedMs),
      (error: unknown) => {
        // A bug, not a disk: let it escape (an unhandled rejection, which the server treats as fatal).
        if (error instanceof AssertionError) throw error;
        // The Store contract says commit never rejects; if one does, treat it as
        // a failure of everything in the batch rather than losing the promises.
        this.finishCommit(sets, batch, everythingFailed(batch, error), startedMs);
      },
    );
  }

  private buildBatch(sets: readonly PendingWriteSet[]): CommitBatch {
    const meta = this.keysReservedBelow > this.keysReservedBelowCommitted ? { ...this.baseMeta, keysReservedBelow: this.keysReservedBelow } : null;
    return this.batchBuilder.build(sets, meta);
  }

  private finishCommit(sets: readonly PendingWriteSet[], batch: CommitBatch, result: CommitResult, startedMs: number): void {
    const durationMs = Math.max(0, this.stopwatch.nowMs() - startedMs);
    const nowMs = this.clock.nowMs();
    this.generation++;
    this.commitsTotal++;
    if (result.failedShards.size > 0 || result.metaError !== null) this.commitFailuresTotal++;
    this.writeSetsPerCommit.add(sets.length);
    this.recordsPerCommit.add(batch.shards.reduce((sum, shardBatch) => sum + shardBatch.keys.length, 0) + batch.outcomes.length + (batch.acked === null ? 0 : 1));
    this.commitMs.add(durationMs);

    this.breaker.record(nowMs, firstFailure(result));
    this.slowCommits.note(durationMs, nowMs);
    if (batch.meta !== null && result.metaError === null) {
      this.keysReservedBelowCommitted = Math.max(this.keysReservedBelowCommitted, batch.meta.keysReservedBelow);
    }

    // Listeners run here, in this turn (a promise's reactions run just
    // after). One that throws does not keep the others from hearing, nor the
    // next batch from starting; its error escapes afterwards, an unhandled
    // rejection, which the server treats as fatal (lib/assert.ts).
    let threw = false;
    let thrown: unknown = null;
    for (const set of sets) {
      try {
        set.settle(this.failureFor(set, result, nowMs));
      } catch (error) {
        if (!threw) thrown = error;
        threw = true;
      }
    }
    // The next batch gathered while this one was in flight: start it now (or,
    // with none, tell the idle listener, before this commit's promise
    // reactions send its replies: what it reads is fresh in the caches when
    // the next request comes).
    this.startCommit();
    if (threw) throw thrown;
  }

  private failureFor(set: PendingWriteSet, result: CommitResult, nowMs: number): StorageUnavailableError | null {
    if (set.firstShard >= 0) {
      const failure = this.shardFailure(set.firstShard, result, nowMs);
      if (failure !== null) return failure;
    }
    if (set.otherShards !== null) {
      for (const shard of set.otherShards) {
        const failure = this.shardFailure(shard, result, nowMs);
        if (failure !== null) return failure;
      }
    }
    if (set.writesOutcomes && result.metaError !== null) {
      return new StorageUnavailableError(`outcome commit failed: ${result.metaError.message}`, null, this.breaker.retryAfterMs(nowMs));
    }
    return null;
  }

  private shardFailure(shard: number, result: CommitResult, nowMs: number): StorageUnavailableError | null {
    const error = result.failedShards.get(shard);
    if (error === undefined) return null;
    return new StorageUnavailableError(`shard ${shard} commit failed: ${error.message}`, shard, this.breaker.retryAfterMs(nowMs));
  }

  private get inFlight(): boolean {
    return this.generation % 2 !== 0;
  }

  private isIdle(): boolean {
    return this.pending.length === 0 && !this.inFlight && !this.flushScheduled;
  }

  /** Nothing in flight or waiting: drain()'s promises resolve and the idle listener runs. */
  private notifyIfIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
    this.idleListener?.();
  }
}

/** The error of a commit that failed in any part, or null when it all committed. */
function firstFailure(result: CommitResult): Error | null {
  for (const error of result.failedShards.values()) return error;
  return result.metaError;
}

function everythingFailed(batch: CommitBatch, error: unknown): CommitResult {
  const failure = error instanceof Error ? error : new Error(String(error));
  const failedShards = new Map<number, Error>();
  for (const { shard } of batch.shards) failedShards.set(shard, failure);
  return { failedShards, metaError: failure };
}
