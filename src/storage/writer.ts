// What the engine writes through: the GroupCommitter (group-commit.ts)
// implements it. The engine changes memory synchronously, records each change
// in a WriteSet, and ends the WriteSet; the returned promise settles when the
// batch carrying it has committed. Under load one commit carries many
// WriteSets (group commit, FOQS-style).

import type { ItemKey } from "./store.ts";
import type { ItemRecord, OutcomeRecord, PauseRecord } from "./record.ts";

/** Thrown (as a rejection) when a shard's commit failed or its breaker is open. */
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
  /** Store a topic's pause (replacing any earlier one of the same ns and topic). */
  putPause(record: PauseRecord): void;
  /** Forget a topic's pause (resumed, or ended by itself). */
  deletePause(ns: string, topic: string): void;
  /**
   * Close the set and hand it to the next commit. Resolves when every write in
   * it is durable; rejects with StorageUnavailableError when any shard it
   * wrote failed to commit. A set with no writes resolves at once.
   */
  end(): Promise<void>;
}

export interface Writer {
  /** Start a WriteSet; all writes of one request go into one set. */
  begin(): WriteSet;
  /**
   * Take the next item key (monotonic across shards and restarts). Reserving a
   * new block of keys writes the meta record into the next commit.
   */
  nextKey(): ItemKey;
  /**
   * Whether new writes to this shard are accepted now (its circuit breaker is
   * closed or half-open and probing). When not, the retry hint in ms.
   */
  shardHealth(shard: number, nowMs: number): { available: true } | { available: false; retryAfterMs: number };
  /** Shard count of the underlying store. */
  readonly shardCount: number;
  /** Resolves when everything begun so far has committed (used at shutdown). */
  drain(): Promise<void>;
}
