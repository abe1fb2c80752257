// When the LMDB store's deferred deletes of acked records run (the queue
// itself is ack-sweep.ts): inside each commit, at most
// ackSweepBounds.keysPerCommitMax of them (below their shard's live floor
// first, then the lowest beyond the lag); in a transaction of their own once
// commits stop for ackSweepBounds.idleSweepMs while records below their
// floors still wait (after a drain no commit comes to carry them); and all
// that wait, once, at close (docs/decisions/004-ack-sweep.md).

import type { RootDatabase } from "lmdb";
import { assert } from "../../lib/assert.ts";
import { ackSweepBounds } from "../../limits.ts";
import type { ItemKey } from "../item-key.ts";
import { AckSweep, type SweptKeys, noSweptKeys } from "./ack-sweep.ts";

/** What the sweeper deletes through: a shard's sub-database (lmdb-options.ts's BinaryDb). */
interface ShardDb {
  removeSync(key: ItemKey): boolean;
}

export class AckSweeper {
  /** Acked items whose records are deleted later, in key order. */
  readonly queue = new AckSweep();
  /** Each shard's lowest live key, from the engine once it runs; until then nothing is below it. */
  private liveKeyFloor: (shard: number) => number = () => -Infinity;
  /** The pending sweep of its own (armIdle), or null. */
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  /** The last sweep of its own, which close() waits for before its own last one. */
  private idleRun: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly env: RootDatabase<Uint8Array, string>,
    private readonly shardDbs: readonly ShardDb[],
    private readonly lagKeys: number,
  ) {}

  setLiveKeyFloor(floorOf: (shard: number) => number): void {
    this.liveKeyFloor = floorOf;
  }

  /** A commit's share: keys below their floors, then the lowest beyond the lag, at most keysPerCommitMax more in `swept`. Restarts the idle wait. */
  takeForCommit(swept: SweptKeys): void {
    this.take(swept);
    this.armIdle();
  }

  /** Inside a write transaction: delete the swept keys' records. */
  deleteSwept(swept: SweptKeys): void {
    for (let i = 0; i < swept.keys.length; i++) {
      const db = this.shardDbs[swept.shards[i] as number];
      assert(db !== undefined, "swept shard out of range");
      db.removeSync(swept.keys[i] as number);
    }
  }

  /** At close: no more sweeps of its own, and the records still waiting go in one last transaction. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    await this.idleRun;
    if (this.queue.size === 0) return;
    const swept = noSweptKeys();
    this.queue.takeLowest(0, swept);
    try {
      await this.env.transaction(() => this.deleteSwept(swept));
    } catch {
      // Left for the next open, whose recovery skips acked records and deletes them.
    }
  }

  private take(swept: SweptKeys): void {
    const limit = swept.keys.length + ackSweepBounds.keysPerCommitMax;
    this.queue.takeBelowFloors(this.liveKeyFloor, swept, limit);
    this.queue.takeLowest(this.lagKeys, swept, limit);
  }

  /** (Re)start the wait for a sweep of its own: each commit pushes it back, so it runs only between loads. */
  private armIdle(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.idleRun = this.idleSweep();
    }, ackSweepBounds.idleSweepMs);
    this.idleTimer.unref?.();
  }

  /** One transaction of sweep deletes and nothing else, then another wait while more are due. */
  private async idleSweep(): Promise<void> {
    this.idleTimer = null;
    if (this.closed || !this.queue.hasBelowFloors(this.liveKeyFloor)) return;
    const swept = noSweptKeys();
    this.take(swept);
    if (swept.keys.length === 0) return;
    try {
      await this.env.transaction(() => this.deleteSwept(swept));
    } catch {
      // Put back for the next commit; recovery skips acked records in any case.
      this.queue.addAll(swept);
      return;
    }
    if (!this.closed && this.idleTimer === null) this.armIdle();
  }
}
