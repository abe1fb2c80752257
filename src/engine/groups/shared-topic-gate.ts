// Cluster mode: a topic's own max_leased and rate held across every node
// (docs/CLUSTER.md, "Topic bounds across nodes"). The node (cluster/
// topic-bound-leases.ts) holds, per topic, rate tokens drawn from the
// cluster's bucket and, per shard it serves, slots of the topic's
// max_leased (an entry: shared-topic-bound.ts); this gate is the engine's
// side of it, asked by a dequeue's take (ops/dequeue.ts) only for a topic
// whose own policy has a max_leased or a rate, and only in cluster mode (a
// single node has no gate).
//
// - Rate: a delivery takes one of the node's tokens; with none, the topic
//   is passed over and the node draws (a parked dequeue is served when the
//   tokens come). The topic's local bucket (bounds.ts) still applies too.
// - max_leased: an item on shard s may be leased only while the topic's
//   leased items on s are fewer than the slots the node holds for s. The
//   take picks with a per-topic shard mask (writable and with a free slot);
//   when that finds nothing, one more pick among the writable shards whose
//   slots are all leased finds the item the worker would have taken, and
//   the node draws slots for that item's shard.
//
// The leased count per shard is kept on the topic (ready/topic.ts's
// countItem) from the first time a gate asks for it; that first time counts
// the topic's leased items in one pass over the engine's items.

import type { KindSource } from "../matching/tops-by-kind.ts";
import type { Topic } from "../ready/topic.ts";
import type { LiveItem } from "../state/item.ts";
import type { PassOverReason } from "./bounds.ts";
import type { SharedTopicBound, SharedTopicBounds } from "./shared-topic-bound.ts";

/** What open() answers when the topic may deliver nothing now. */
export const gateClosed = "closed";

export class SharedTopicGate {
  /** Shards the current pick may lease from (1), for the topic being taken from; reused by every take. */
  private readonly mask: Uint8Array;

  constructor(
    private readonly bounds: SharedTopicBounds,
    /** The engine's live items, for the one count of a topic's leased items per shard. */
    private readonly items: { values(): Iterable<LiveItem> },
    private readonly shardCount: number,
    private readonly passedOver: Record<PassOverReason, number>,
  ) {
    this.mask = new Uint8Array(shardCount);
  }

  /** Whether the topic's own policy binds it across the cluster (a max_leased or a rate): only then is the gate asked. */
  binds(topic: Topic<LiveItem>): boolean {
    const own = topic.policies?.own ?? null;
    return own !== null && (own.maxLeased !== null || own.rate !== null);
  }

  /**
   * Before a dequeue picks from the topic: gateClosed when it holds no rate
   * token (a draw is begun), else the shards it may lease from: `shardOk`
   * when no max_leased binds, else the mask of writable shards with a free
   * slot (possibly none: the pick then finds nothing, and short() draws).
   */
  open(topic: Topic<LiveItem>, shardOk: Uint8Array | null, wanted: number, nowMs: number): Uint8Array | null | typeof gateClosed {
    const own = topic.policies?.own;
    if (own === null || own === undefined) return shardOk;
    const bound = this.boundOf(topic);
    const rate = own.rate;
    if (rate !== null && bound.rateHeld(rate.count, rate.perMs) < 1) {
      bound.rateShort(wanted, nowMs);
      this.passedOver.topic_rate++;
      return gateClosed;
    }
    if (own.maxLeased === null) return shardOk;
    const leased = this.leasedOf(topic);
    const mask = this.mask;
    for (let shard = 0; shard < this.shardCount; shard++) {
      mask[shard] = (shardOk === null || shardOk[shard] === 1) && (leased[shard] as number) < bound.slots(shard) ? 1 : 0;
    }
    return mask;
  }

  /**
   * A take leased `item` (its leased count is in already): take its token
   * and its slot. False when the node's tokens ran out, so the take stops
   * here (and, with `wantedLeft` more wanted, a draw is begun).
   */
  delivered(topic: Topic<LiveItem>, item: LiveItem, wantedLeft: number, nowMs: number): boolean {
    const own = topic.policies?.own;
    const bound = topic.sharedBound;
    if (own === null || own === undefined || bound === null) return true;
    if (own.maxLeased !== null) {
      bound.slotUsed(item.shard, nowMs);
      if ((this.leasedOf(topic)[item.shard] as number) >= bound.slots(item.shard)) this.mask[item.shard] = 0;
    }
    const rate = own.rate;
    if (rate === null) return true;
    bound.takeToken(nowMs);
    if (bound.rateHeld(rate.count, rate.perMs) >= 1) return true;
    if (wantedLeft > 0) bound.rateShort(wantedLeft, nowMs);
    return false;
  }

  /**
   * The pick found nothing while the dequeue wanted `wanted` more: if an
   * item it may take sits on a writable shard whose slots are all leased,
   * draw slots for that shard.
   */
  short(topic: Topic<LiveItem>, eligibility: KindSource, kind: number, shardOk: Uint8Array | null, wanted: number, nowMs: number): void {
    const max = topic.policies?.own?.maxLeased ?? null;
    const bound = topic.sharedBound;
    if (max === null || bound === null) return;
    const leased = this.leasedOf(topic);
    const blocked = this.mask;
    let any = false;
    for (let shard = 0; shard < this.shardCount; shard++) {
      const full = (shardOk === null || shardOk[shard] === 1) && (leased[shard] as number) >= bound.slots(shard);
      blocked[shard] = full ? 1 : 0;
      if (full) any = true;
    }
    if (!any) return;
    const item = topic.pickBest(eligibility, kind, blocked);
    if (item === null) return;
    this.passedOver.topic_max_leased++;
    bound.slotsShort(item.shard, wanted, leased[item.shard] as number, max, nowMs);
  }

  /** The topic's leased items on `shard` (the node's hand-backs ask). */
  leasedOn(topic: Topic<LiveItem>, shard: number): number {
    return this.leasedOf(topic)[shard] as number;
  }

  private boundOf(topic: Topic<LiveItem>): SharedTopicBound {
    let bound = topic.sharedBound;
    if (bound === null || bound.retired) {
      bound = this.bounds.of(topic.ns, topic.name);
      topic.sharedBound = bound;
    }
    return bound;
  }

  /** The topic's leased items per shard: counted once here, then kept by countItem. */
  private leasedOf(topic: Topic<LiveItem>): Int32Array {
    let counts = topic.leasedByShard;
    if (counts !== null) return counts;
    counts = new Int32Array(this.shardCount);
    if (topic.leased > 0) {
      for (const item of this.items.values()) if (item.topic === topic && item.state === "leased") counts[item.shard] = (counts[item.shard] ?? 0) + 1;
    }
    topic.leasedByShard = counts;
    return counts;
  }
}
