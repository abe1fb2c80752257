// The GroupCommitter's WriteSet: the writes of one request in the order
// made (batch-builder.ts turns the sets of a commit into one batch), the
// shards they touch (which part of a failed commit fails it), and whoever
// waits for its commit, told once when it settles. It is its own Commit
// (writer.ts): closing a set allocates nothing more, and a promise is made
// only for a caller that asks for one (end()).

import { assert } from "../lib/assert.ts";
import type { Operation } from "./batch-builder.ts";
import type { ItemRecord, OutcomeRecord, PauseRecord } from "./record.ts";
import type { ItemKey } from "./store.ts";
import type { StorageUnavailableError } from "./writer.ts";
import type { Commit, CommitListener, WriteSet } from "./writer.ts";

/** What a set needs from its GroupCommitter. */
export interface SetCommitter {
  readonly shardCount: number;
  /** The set is closed: it joins the next commit, or settles at once. */
  enqueue(set: PendingWriteSet): void;
}

export class PendingWriteSet implements WriteSet, Commit {
  /**
   * Its writes in the order made: the first here, any others in
   * `moreOperations`. An ack's set holds one write (ackItem), and an array
   * for it was two JS-heap cells per ack.
   */
  firstOperation: Operation | null = null;
  moreOperations: Operation[] | null = null;
  /**
   * The shards it writes: the first in `firstShard` (-1 for none), any others
   * in `otherShards`. Most sets (an ack, a lease) write one shard, and a Set
   * per write set was a few JS-heap cells per request.
   */
  firstShard = -1;
  otherShards: Set<number> | null = null;
  /** Writes outcomes or pauses: the part of a commit outside every shard (CommitResult.metaError). */
  writesOutcomes = false;
  ended = false;
  /** Its commit is over: committed when `failure` is null. */
  settled = false;
  failure: StorageUnavailableError | null = null;
  /**
   * Who waits: a listener (close().listen), a promise (end(), made only when
   * asked for: Promise.withResolvers is a promise, an object and two
   * functions), or both.
   */
  private listener: CommitListener | null = null;
  private deferred: PromiseWithResolvers<void> | null = null;

  constructor(private readonly committer: SetCommitter) {}

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

  ackItem(ns: string, shard: number, key: ItemKey, endedAtMs: number): void {
    this.add({ kind: "acked", ns, shard, key, endedAtMs, record: null });
  }

  purgeAckedBefore(beforeMs: number): void {
    this.add({ kind: "purgeAcked", beforeMs });
  }

  putPause(record: PauseRecord): void {
    this.add({ kind: "pause", ns: record.ns, topic: record.topic, record });
  }

  deletePause(ns: string, topic: string): void {
    this.add({ kind: "pause", ns, topic, record: null });
  }

  end(): Promise<void> {
    return this.close().promise();
  }

  close(): Commit {
    assert(!this.ended, "WriteSet ended twice");
    this.ended = true;
    this.committer.enqueue(this);
    return this;
  }

  listen(listener: CommitListener): void {
    assert(this.ended, "listen on a WriteSet not yet closed");
    assert(this.listener === null, "a Commit takes one listener");
    this.listener = listener;
    if (!this.settled) return;
    if (this.failure === null) listener.committed();
    else listener.failed(this.failure);
  }

  promise(): Promise<void> {
    assert(this.ended, "promise of a WriteSet not yet closed");
    let deferred = this.deferred;
    if (deferred === null) {
      deferred = Promise.withResolvers<void>();
      this.deferred = deferred;
      if (this.settled) settleDeferred(deferred, this.failure);
    }
    return deferred.promise;
  }

  /** Its commit is over (or it was refused, or had nothing to write): tell whoever waits. */
  settle(failure: StorageUnavailableError | null): void {
    assert(this.ended && !this.settled, "a WriteSet settles once, after it is closed");
    this.settled = true;
    this.failure = failure;
    if (this.deferred !== null) settleDeferred(this.deferred, failure);
    const listener = this.listener;
    if (listener === null) return;
    if (failure === null) listener.committed();
    else listener.failed(failure);
  }

  private add(operation: Operation): void {
    assert(!this.ended, "write to an ended WriteSet");
    if (operation.kind === "item" || operation.kind === "acked") {
      // Messages are built only on failure: this runs for every write.
      if (!(operation.shard >= 0 && operation.shard < this.committer.shardCount)) assert(false, `shard ${operation.shard} out of range`);
      if (!(Number.isSafeInteger(operation.key) && operation.key >= 0)) assert(false, `bad item key ${operation.key}`);
      const shard = operation.shard;
      if (this.firstShard < 0) this.firstShard = shard;
      else if (shard !== this.firstShard) (this.otherShards ??= new Set()).add(shard);
    }
    // The acked-log record is outside every shard too.
    if (operation.kind !== "item") this.writesOutcomes = true;
    if (this.firstOperation === null) this.firstOperation = operation;
    else (this.moreOperations ??= []).push(operation);
  }
}

function settleDeferred(deferred: PromiseWithResolvers<void>, failure: StorageUnavailableError | null): void {
  if (failure === null) deferred.resolve();
  else deferred.reject(failure);
}
