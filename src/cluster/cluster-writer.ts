// The engine's Writer in cluster mode: the group committer underneath, with
// one more reason a shard refuses writes, that this node does not serve it.
// The engine already asks `writable` before it places a new item and before
// it leases from a shard (a shard behind an open circuit breaker), so a shard
// this node does not serve is neither written nor delivered from, with no
// change to the engine.

import { clusterLimits } from "../limits.ts";
import type { Availability } from "../storage/circuit-breaker.ts";
import type { WriteSet, Writer } from "../storage/writer.ts";
import type { ItemKey } from "../storage/store.ts";


export class ClusterWriter implements Writer {
  readonly shardCount: number;

  constructor(
    private readonly inner: Writer,
    /** Whether this node serves the shard now. */
    private readonly served: (shard: number) => boolean,
  ) {
    this.shardCount = inner.shardCount;
  }

  begin(): WriteSet {
    return this.inner.begin();
  }

  nextKey(): ItemKey {
    return this.inner.nextKey();
  }

  writable(shard: number, nowMs: number): Availability {
    if (!this.served(shard)) return { available: false, retryAfterMs: clusterLimits.unownedRetryAfterMs, reason: `shard ${shard} is not served by this node` };
    return this.inner.writable(shard, nowMs);
  }

  /** Never true: a node serves only its own shards, so the engine must ask shard by shard. */
  allWritable(_nowMs: number): boolean {
    return false;
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
