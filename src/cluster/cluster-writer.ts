// The engine's Writer in cluster mode: the group committer underneath, with
// one more reason a shard refuses writes, that this node does not serve it.
// The engine already asks shardHealth before it places a new item and before
// it leases from a shard (a shard behind an open circuit breaker), so a shard
// this node does not serve is neither written nor delivered from, with no
// change to the engine.

import { clusterLimits } from "../limits.ts";
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

  shardHealth(shard: number, nowMs: number): { available: true } | { available: false; retryAfterMs: number } {
    if (!this.served(shard)) return { available: false, retryAfterMs: clusterLimits.unownedRetryAfterMs };
    return this.inner.shardHealth(shard, nowMs);
  }

  drain(): Promise<void> {
    return this.inner.drain();
  }
}
