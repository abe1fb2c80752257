// The Writer of `orq serve --store memory`: nothing is on disk and nothing is
// ever recovered (a restart starts empty), so there is nothing to commit. A
// write set applies each item write to the MemoryStore as it is made and is
// settled from the start: no group commit, no batch, no record read back and
// checked at a commit, no promise per set (docs/decisions/035-memory-writer.md).
//
// What it keeps: each item's encoded value, as the durable path would (the
// engine reads the payload, metadata and `requires` back for a delivery or a
// `get`: docs/decisions/019-items-in-memory.md), replaced by later writes of
// the item and deleted at its end. What it drops: outcomes, acked-log
// entries, pauses, policies and key reservations, which a store holds only
// for recovery (the engine keeps its own copies). It is `volatile`, so the
// engine writes no deferred lease either (ItemStates.lease).
//
// Every write set is the one object: it holds no state (its writes are
// applied as made), and the commit it returns has always landed.

import { assert } from "../../lib/assert.ts";
import type { Availability, BreakerState } from "../circuit-breaker.ts";
import type { CommitStats } from "../commit-stats.ts";
import { encodeItemRecord } from "../record-codec.ts";
import type { ItemRecord } from "../record.ts";
import type { ItemKey } from "../store.ts";
import type { Commit, CommitListener, WriteSet, Writer } from "../writer.ts";
import type { MemoryStore } from "./memory-store.ts";

/** Every shard takes writes, always: there is no disk to fail. */
const alwaysAvailable: Availability = Object.freeze({ available: true });

/** What commitStats says: there are no commits. */
const noCommits: CommitStats = Object.freeze({ commitsTotal: 0, commitFailuresTotal: 0, writeSetsRejectedTotal: 0, writeSetsPerCommit: [], recordsPerCommit: [], commitMs: [] });

/** The commit of every set: landed already (as an empty WriteSet's is). */
const settled: Promise<void> = Promise.resolve();

export class MemoryWriter implements Writer {
  readonly shardCount: number;
  readonly volatile = true;
  private nextKeyValue: number;
  /** Moves by 2 at each set closed, so enqueue's shard rotation still moves on (Writer.commitGeneration; never odd: nothing is in flight). */
  private generation = 0;
  private readonly set: MemoryWriteSet;

  constructor(store: MemoryStore) {
    this.shardCount = store.shardCount;
    this.nextKeyValue = store.meta.keysReservedBelow;
    this.set = new MemoryWriteSet(store, this);
  }

  begin(): WriteSet {
    return this.set;
  }

  nextKey(): ItemKey {
    const key = this.nextKeyValue;
    assert(key < Number.MAX_SAFE_INTEGER, "item keys exhausted");
    this.nextKeyValue++;
    return key;
  }

  drain(): Promise<void> {
    return settled;
  }

  get commitGeneration(): number {
    return this.generation;
  }

  /** For MemoryWriteSet.close. */
  closed(): void {
    this.generation += 2;
  }

  setIdleListener(_listener: (() => void) | null): void {
    // Never idle after a commit, since there are none: the engine's read-ahead has nothing to hide.
  }

  writable(shard: number, _nowMs: number): Availability {
    if (!(shard >= 0 && shard < this.shardCount)) assert(false, `shard ${shard} out of range`);
    return alwaysAvailable;
  }

  allWritable(_nowMs: number): boolean {
    return true;
  }

  /** For /metrics and the dashboard, as the GroupCommitter's: no commit, ever (a count without samples would read as samples dropped). */
  commitStats(): CommitStats {
    return noCommits;
  }

  breakerState(_nowMs: number): BreakerState {
    return "closed";
  }
}

/** The one write set (see the file header): item writes go to the store at once, the rest nowhere. */
class MemoryWriteSet implements WriteSet, Commit {
  constructor(
    private readonly store: MemoryStore,
    private readonly writer: MemoryWriter,
  ) {}

  putItem(shard: number, key: ItemKey, record: ItemRecord): void {
    // Encoded now, as the durable path encodes in the caller's turn: a bad record throws here.
    this.store.putItemValue(shard, key, encodeItemRecord(record));
  }

  putItemBytes(shard: number, key: ItemKey, value: Uint8Array): void {
    // A stored value with its state patched (the caller no longer changes it): kept as given.
    this.store.putItemValue(shard, key, value);
  }

  deleteItem(shard: number, key: ItemKey): void {
    this.store.putItemValue(shard, key, null);
  }

  ackItem(_ns: string, shard: number, key: ItemKey, _endedAtMs: number): void {
    // The acked log is for recovery only: the item goes, nothing is remembered.
    this.store.putItemValue(shard, key, null);
  }

  putOutcome(): void {}

  deleteOutcome(): void {}

  purgeAckedBefore(): void {}

  putPause(): void {}

  deletePause(): void {}

  putPolicy(): void {}

  deletePolicy(): void {}

  end(): Promise<void> {
    this.writer.closed();
    return settled;
  }

  close(): Commit {
    this.writer.closed();
    return this;
  }

  listen(listener: CommitListener): void {
    listener.committed();
  }

  promise(): Promise<void> {
    return settled;
  }
}
