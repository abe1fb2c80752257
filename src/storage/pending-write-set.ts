// The GroupCommitter's WriteSet: the writes of one request in the order
// made, in a pooled flat WriteLog (write-log.ts; batch-builder.ts turns the
// sets of a commit into one batch), the
// shards they touch (which part of a failed commit fails it), and whoever
// waits for its commit, told once when it settles. It is its own Commit
// (writer.ts): closing a set allocates nothing more, and a promise is made
// only for a caller that asks for one (end()).

import { assert } from "../lib/assert.ts";
import type { ItemRecord, OutcomeRecord, PauseRecord, PolicyRecord, ScheduleRecord } from "./record.ts";
import type { ItemKey } from "./store.ts";
import type { StorageUnavailableError } from "./writer.ts";
import type { Commit, CommitListener, WriteSet } from "./writer.ts";
import type { WriteLog } from "./write-log.ts";

/** What a set needs from its GroupCommitter. */
export interface SetCommitter {
  readonly shardCount: number;
  /** A log for the set's writes, taken at its first write (WriteLogPool.take). */
  takeLog(): WriteLog;
  /** The set is closed: it joins the next commit, or settles at once. */
  enqueue(set: PendingWriteSet): void;
}

export class PendingWriteSet implements WriteSet, Commit {
  /**
   * Its writes in the order made; null until the first (a set with none
   * takes no log). The committer takes it back (releaseLog) once the set's
   * batch is built or the set is refused: nothing reads it after that.
   */
  log: WriteLog | null = null;
  /**
   * The shards it writes: the first in `firstShard` (-1 for none), any others
   * in `otherShards`. Most sets (an ack, a lease) write one shard, and a Set
   * per write set would be a few JS-heap cells per request.
   */
  firstShard = -1;
  otherShards: Set<number> | null = null;
  /** Writes outcomes, pauses or policies: the part of a commit outside every shard (CommitResult.metaError). */
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
    this.writeTo(shard, key).item(shard, key, record);
  }

  putItemBytes(shard: number, key: ItemKey, value: Uint8Array): void {
    this.writeTo(shard, key).item(shard, key, value);
  }

  deleteItem(shard: number, key: ItemKey): void {
    this.writeTo(shard, key).item(shard, key, null);
  }

  putOutcome(id: string, record: OutcomeRecord): void {
    this.writeOutside().outcome(id, record);
  }

  deleteOutcome(id: string): void {
    this.writeOutside().outcome(id, null);
  }

  ackItem(ns: string, shard: number, key: ItemKey, endedAtMs: number): void {
    // It deletes the item (its shard) and writes the acked-log record (outside every shard).
    this.writeTo(shard, key).acked(ns, shard, key, endedAtMs);
    this.writesOutcomes = true;
  }

  purgeAckedBefore(beforeMs: number): void {
    this.writeOutside().purgeAcked(beforeMs);
  }

  putPause(record: PauseRecord): void {
    this.writeOutside().pause({ ns: record.ns, topic: record.topic, group: record.group, record });
  }

  deletePause(ns: string, topic: string, group: string | null): void {
    this.writeOutside().pause({ ns, topic, group, record: null });
  }

  putPolicy(record: PolicyRecord): void {
    this.writeOutside().policy({ ns: record.ns, topic: record.topic, group: record.group, record });
  }

  deletePolicy(ns: string, topic: string, group: string | null): void {
    this.writeOutside().policy({ ns, topic, group, record: null });
  }

  putSchedule(record: ScheduleRecord, shard: number): void {
    this.writeOutside().schedule({ ns: record.ns, name: record.name, shard, record });
  }

  deleteSchedule(ns: string, name: string, shard: number): void {
    this.writeOutside().schedule({ ns, name, shard, record: null });
  }

  /** The set's log, once its batch is built or it is refused: the caller gives it back to the pool. */
  releaseLog(): WriteLog | null {
    const log = this.log;
    this.log = null;
    return log;
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

  /** The log for a write to item (shard, key), after checking them and noting the shard. */
  private writeTo(shard: number, key: ItemKey): WriteLog {
    const log = this.openLog();
    // Messages are built only on failure: this runs for every write.
    if (!(shard >= 0 && shard < this.committer.shardCount)) assert(false, `shard ${shard} out of range`);
    if (!(Number.isSafeInteger(key) && key >= 0)) assert(false, `bad item key ${key}`);
    if (this.firstShard < 0) this.firstShard = shard;
    else if (shard !== this.firstShard) (this.otherShards ??= new Set()).add(shard);
    return log;
  }

  /** The log for a write outside every shard (outcome, acked log, purge, pause, policy): it fails with the commit's meta part. */
  private writeOutside(): WriteLog {
    const log = this.openLog();
    this.writesOutcomes = true;
    return log;
  }

  private openLog(): WriteLog {
    assert(!this.ended, "write to an ended WriteSet");
    return (this.log ??= this.committer.takeLog());
  }
}

function settleDeferred(deferred: PromiseWithResolvers<void>, failure: StorageUnavailableError | null): void {
  if (failure === null) deferred.resolve();
  else deferred.reject(failure);
}
