// The engine's view of which shards take writes, asked before an op changes
// memory (an item whose shard cannot take its write must not change). The
// answer comes from the Writer's ShardAvailability: with one store (LMDB, one
// transaction for every shard) all shards answer alike, from the store's
// circuit breaker; in a cluster shards can differ. The hot path asks one
// question, allWritable(), and looks at single shards only when it is false.
// Shared by the op files (ops/op-context.ts, ops/enqueue.ts, ops/dequeue.ts).

import type { ShardAvailability } from "../../storage/writer.ts";
import { type FailureResult, storageUnavailable } from "../failures/failures.ts";

/** Retry hint when the store has no shard at all to ask (1 s): none reported its own. */
const noShardsRetryAfterMs = 1000;

/** A dequeue's filter when no shard takes writes: nothing may be leased. */
export const noShardWritable = "none";

/** Which shards a dequeue may lease from, cached for the millisecond while some shard takes no writes. */
export class DequeueShardFilter {
  /** Per shard: 1 when it takes writes, as of `maskAtMs` (refreshed at most once per ms while some shard does not). */
  private readonly mask: Uint8Array;
  private maskAtMs = Number.NaN;
  private anyWritable = true;

  constructor(
    private readonly shards: ShardAvailability,
    shardCount: number,
  ) {
    this.mask = new Uint8Array(shardCount);
  }

  /** A shard began (or stopped) taking writes outside the store's own view (cluster mode's moves): ask again at the next dequeue. */
  forget(): void {
    this.maskAtMs = Number.NaN;
  }

  /**
   * The shards a dequeue may lease from: null when every shard takes writes
   * (no filter), noShardWritable when none does, else a mask (1 = writable).
   */
  dequeueFilter(nowMs: number): Uint8Array | null | typeof noShardWritable {
    if (this.shards.allWritable(nowMs)) return null;
    if (nowMs !== this.maskAtMs) {
      this.maskAtMs = nowMs;
      let any = false;
      for (let shard = 0; shard < this.mask.length; shard++) {
        const writable = this.shards.writable(shard, nowMs).available;
        this.mask[shard] = writable ? 1 : 0;
        if (writable) any = true;
      }
      this.anyWritable = any;
    }
    return this.anyWritable ? this.mask : noShardWritable;
  }
}

/** storage_unavailable (before any change) when a shard these items live on does not take writes; null when all do. */
export function refuseUnwritable(shards: ShardAvailability, items: ReadonlyArray<{ shard: number }>, nowMs: number): FailureResult | null {
  if (shards.allWritable(nowMs)) return null;
  for (const item of items) {
    const availability = shards.writable(item.shard, nowMs);
    if (!availability.available) return storageUnavailable(availability.retryAfterMs, availability.reason);
  }
  return null;
}

/**
 * The shard for a new enqueue: `preferred` when every shard takes writes,
 * else the first writable one from it on, round-robin; -1 with the smallest
 * retry hint (and its reason) when none does.
 */
export function chooseWritableShard(
  shards: ShardAvailability,
  shardCount: number,
  preferred: number,
  nowMs: number,
): { shard: number; retryAfterMs: number; reason: string } {
  if (shards.allWritable(nowMs)) return { shard: preferred, retryAfterMs: 0, reason: "" };
  let retryAfterMs = Number.POSITIVE_INFINITY;
  let reason = "no storage shard is accepting writes";
  for (let i = 0; i < shardCount; i++) {
    const shard = (preferred + i) % shardCount;
    const availability = shards.writable(shard, nowMs);
    if (availability.available) return { shard, retryAfterMs: 0, reason: "" };
    if (availability.retryAfterMs < retryAfterMs) {
      retryAfterMs = availability.retryAfterMs;
      reason = availability.reason;
    }
  }
  return { shard: -1, retryAfterMs: Number.isFinite(retryAfterMs) ? retryAfterMs : noShardsRetryAfterMs, reason };
}
