// What the engine writes through: the GroupCommitter (group-commit.ts)
// implements it. The engine changes memory synchronously, records each change
// in a WriteSet, and ends the WriteSet; the returned promise settles when the
// batch carrying it has committed. Under load one commit carries many
// WriteSets (group commit, FOQS-style). A caller that waits on many sets
// (the dispatcher, one per acked request) may close a set instead and listen
// on the Commit it returns: a listener object called when the commit settles,
// where a promise costs a promise, its resolvers, and a reaction per waiter.

import type { Availability } from "./circuit-breaker.ts";
import type { ItemKey } from "./store.ts";
import type { ItemRecord, OutcomeRecord, PauseRecord, PolicyRecord } from "./record.ts";

/** Thrown (as a rejection) when a shard's commit failed or the store's breaker is open. */
export class StorageUnavailableError extends Error {
  override name = "StorageUnavailableError";
  constructor(
    message: string,
    readonly shard: number | null,
    readonly retryAfterMs: number,
  ) {
    super(message);
  }
}

export interface WriteSet {
  putItem(shard: number, key: ItemKey, record: ItemRecord): void;
  /**
   * Put an item value already encoded in the current record version (a
   * stored value with its state patched). The caller must not change the
   * bytes afterwards: they are written when the batch commits.
   */
  putItemBytes(shard: number, key: ItemKey, value: Uint8Array): void;
  deleteItem(shard: number, key: ItemKey): void;
  putOutcome(id: string, record: OutcomeRecord): void;
  deleteOutcome(id: string): void;
  /**
   * Delete an acked item and remember it in this commit's acked-log record
   * (acked-log.ts), instead of an outcome record of its own: one write, where
   * a deleteItem and an outcome would be two (docs/decisions/003-acked-log.md).
   */
  ackItem(ns: string, shard: number, key: ItemKey, endedAtMs: number): void;
  /** Remove acked-log records whose newest end is before this instant (their retention is over). */
  purgeAckedBefore(beforeMs: number): void;
  /** Store a topic's or group's pause (replacing any earlier one of the same ns, topic and group). */
  putPause(record: PauseRecord): void;
  /** Forget a topic's (group null) or group's pause (resumed, or ended by itself). */
  deletePause(ns: string, topic: string, group: string | null): void;
  /** Store a policy (replacing any earlier one of the same ns, topic and group). */
  putPolicy(record: PolicyRecord): void;
  /** Forget a policy (cleared). */
  deletePolicy(ns: string, topic: string, group: string | null): void;
  /**
   * Close the set and hand it to the next commit. Resolves when every write in
   * it is durable; rejects with StorageUnavailableError when any shard it
   * wrote failed to commit. A set with no writes resolves at once.
   */
  end(): Promise<void>;
  /**
   * Close the set and hand it to the next commit, like end(), but return the
   * set's Commit to listen on instead of a promise. A set with no writes is
   * committed at once; one refused (breaker open, queue full) has failed.
   */
  close(): Commit;
}

/** What waits on a closed WriteSet: called once, when its commit settles. */
export interface CommitListener {
  /** Every write of the set is durable. */
  committed(): void;
  /** A shard it wrote failed to commit, or the set was refused: a StorageUnavailableError. */
  failed(error: unknown): void;
}

/** A closed WriteSet, waiting for its commit: at most one listener, or one promise (made on demand). */
export interface Commit {
  /** Call `listener` when the commit settles (at once if it has). A Commit takes one listener. */
  listen(listener: CommitListener): void;
  /** The same as a promise: what end() returns. */
  promise(): Promise<void>;
}

/**
 * Which shards take writes now: the engine's one question about storage
 * health, asked before an op changes memory. The GroupCommitter answers from
 * the store's one circuit breaker (every shard alike, since one LMDB
 * transaction covers them all); a cluster, where shards really are separate
 * (owned by different nodes), can answer per shard by wrapping the Writer.
 */
export interface ShardAvailability {
  /** Whether new writes to `shard` are accepted now; when not, why and a retry hint. */
  writable(shard: number, nowMs: number): Availability;
  /** True when every shard takes writes now: lets the hot path skip the per-shard question. */
  allWritable(nowMs: number): boolean;
}

export interface Writer extends ShardAvailability {
  /**
   * True when nothing written outlives the process (`--store memory`): the
   * engine then skips writes that only a recovery would read (deferred lease
   * writes). Absent means false.
   */
  readonly volatile?: boolean;
  /** Start a WriteSet; all writes of one request go into one set. */
  begin(): WriteSet;
  /**
   * Take the next item key (monotonic across shards and restarts). Reserving a
   * new block of keys writes the meta record into the next commit.
   */
  nextKey(): ItemKey;
  /** Shard count of the underlying store. */
  readonly shardCount: number;
  /** Resolves when everything begun so far has committed (used at shutdown). */
  drain(): Promise<void>;
  /**
   * Moves on when what the store holds may change: as each commit starts and
   * as it lands. A read taken while no commit is in flight (an even value)
   * still stands for as long as the value has not moved.
   */
  readonly commitGeneration: number;
  /**
   * Called, outside any op, each time a commit lands and no write waits for
   * the next (the engine reads ahead then: engine/ready/read-ahead.ts). One listener; null
   * removes it.
   */
  setIdleListener(listener: (() => void) | null): void;
}
