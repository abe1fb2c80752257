// A Writer that answers "is this shard writable?" per shard, over the real
// GroupCommitter: what a cluster, where shards are owned by different nodes,
// would put in front of the store. Tests close single shards with it to check
// the engine's per-shard paths (enqueue skips a closed shard, ops on its items
// are refused before any change, dequeue skips its heaps).

import type { Availability } from "../../../src/storage/circuit-breaker.ts";
import type { GroupCommitter } from "../../../src/storage/group-commit.ts";
import type { ItemKey } from "../../../src/storage/store.ts";
import type { WriteSet, Writer } from "../../../src/storage/writer.ts";

/** Retry hint a closed shard gives (what an ownership move might take). */
export const closedShardRetryAfterMs = 2000;

export class ShardGate implements Writer {
  readonly closed = new Set<number>();

  constructor(private readonly inner: GroupCommitter) {}

  get shardCount(): number {
    return this.inner.shardCount;
  }

  writable(shard: number, nowMs: number): Availability {
    if (this.closed.has(shard)) return { available: false, retryAfterMs: closedShardRetryAfterMs, reason: `shard ${shard} is not owned here` };
    return this.inner.writable(shard, nowMs);
  }

  allWritable(nowMs: number): boolean {
    return this.closed.size === 0 && this.inner.allWritable(nowMs);
  }

  begin(): WriteSet {
    return this.inner.begin();
  }

  nextKey(): ItemKey {
    return this.inner.nextKey();
  }

  drain(): Promise<void> {
    return this.inner.drain();
  }

  get commitGeneration(): number {
    return this.inner.commitGeneration;
  }

  setIdleListener(listener: (() => void) | null): void {
    this.inner.setIdleListener(listener);
  }
}
