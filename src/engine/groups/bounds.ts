// The rate side of the contract's bounds, and what a delivery does to the
// rotation: after each lease a dequeue reports it here, which moves its
// group's virtual time on, takes a token from the topic's and the group's
// buckets, and holds back whichever ran dry until its next token (one
// BoundRefill deadline on the engine's deadline heap, no timer). Bounds never
// block other work: a held group leaves the rotation (group-rotation.ts) and
// a held topic is skipped by dequeues, so the next eligible item goes out.
// The max_leased side needs no clock: it follows the leased counts
// (ready/topic.ts's countItem).

import type { HeapNode } from "../../lib/pairing-heap.ts";
import type { LiveItem } from "../state/item.ts";
import type { Topic } from "../ready/topic.ts";
import { Deadline, DeadlineKind } from "../time/deadlines.ts";
import type { EngineDeadlines } from "../time/engine-deadlines.ts";
import { type Group, Held, type RefillDeadline, type RefillTarget } from "./group.ts";


/** Why deliveries were passed over (the metric's reasons). */
export type PassOverReason = "topic_paused" | "topic_max_leased" | "topic_rate" | "group_max_leased" | "group_rate";

export class Bounds {
  /** Deliveries passed over since start, by reason (observability/passed-over.ts). */
  readonly passedOver: Record<PassOverReason, number> = { topic_paused: 0, topic_max_leased: 0, topic_rate: 0, group_max_leased: 0, group_rate: 0 };

  constructor(
    private readonly deadlines: EngineDeadlines,
    /** Marks a topic whose items became deliverable again: its parked dequeues are served. */
    private readonly released: (topic: Topic<LiveItem>) => void,
  ) {}

  /**
   * Whether the topic's own bounds let a delivery through now. A topic whose
   * rate bucket ran dry is held until its next token (a topic that emptied
   * and came back finds its bucket as it left it: policy-table.ts).
   */
  topicOpen(topic: Topic<LiveItem>, nowMs: number): boolean {
    if (topic.held !== 0) {
      this.passedOver[(topic.held & Held.maxLeased) !== 0 ? "topic_max_leased" : "topic_rate"]++;
      return false;
    }
    const bucket = topic.policies?.bucketOf(undefined, nowMs) ?? null;
    if (bucket === null || bucket.canTake(nowMs)) return true;
    this.passedOver.topic_rate++;
    topic.held |= Held.rate;
    this.scheduleRefill(topic, null, bucket.nextAtMs(nowMs));
    return false;
  }

  /**
   * Whether the picked item's group may deliver now: false when its rate
   * bucket is dry (a group made before its bucket emptied), which then holds
   * the group back until its next token, so the caller picks again.
   */
  groupAdmits(topic: Topic<LiveItem>, item: LiveItem, nowMs: number): boolean {
    const rotation = topic.rotation;
    const policies = topic.policies;
    if (rotation === null || policies === null) return true;
    const group = item.group ?? rotation.nil;
    const bucket = policies.bucketOf(group.name, nowMs);
    if (bucket === null || bucket.canTake(nowMs)) return true;
    this.passedOver.group_rate++;
    group.held |= Held.rate;
    rotation.place(group);
    this.scheduleRefill(topic, group, bucket.nextAtMs(nowMs));
    return false;
  }

  /** A dequeue leased `item` of `topic` at nowMs. */
  delivered(topic: Topic<LiveItem>, item: LiveItem, nowMs: number): void {
    const policies = topic.policies;
    const bucket = policies === null ? null : policies.bucketOf(undefined, nowMs);
    if (bucket !== null) {
      bucket.take(nowMs);
      if (!bucket.canTake(nowMs)) {
        topic.held |= Held.rate;
        this.scheduleRefill(topic, null, bucket.nextAtMs(nowMs));
      }
    }
    const rotation = topic.rotation;
    if (rotation === null) return;
    const group = item.group ?? rotation.nil;
    rotation.delivered(group);
    if ((group.held & Held.maxLeased) !== 0 && group.atMaxLeased() && group.leased === group.policy?.maxLeased) this.passedOver.group_max_leased++;
    const groupBucket = policies === null ? null : policies.bucketOf(group.name, nowMs);
    if (groupBucket !== null) {
      groupBucket.take(nowMs);
      if (!groupBucket.canTake(nowMs)) {
        this.passedOver.group_rate++;
        group.held |= Held.rate;
        rotation.place(group);
        this.scheduleRefill(topic, group, groupBucket.nextAtMs(nowMs));
      }
    }
  }

  /** A refill deadline came: the bucket holds a token again (else wait for the next one). */
  refill(target: RefillTarget, nowMs: number): void {
    // Scheduled by scheduleRefill below, from a live topic and one of its groups.
    const topic = target.topic as Topic<LiveItem>;
    const group = target.group as Group<LiveItem> | null;
    if (group === null) {
      topic.refillNode = null;
      const bucket = topic.policies?.bucketOf(undefined, nowMs) ?? null;
      if ((topic.held & Held.rate) === 0) return;
      if (bucket !== null && !bucket.canTake(nowMs)) {
        this.scheduleRefill(topic, null, bucket.nextAtMs(nowMs));
        return;
      }
      topic.held &= ~Held.rate;
      if (topic.held === 0) this.released(topic);
      return;
    }
    group.refillNode = null;
    if ((group.held & Held.rate) === 0) return;
    const bucket = topic.policies?.bucketOf(group.name, nowMs) ?? null;
    if (bucket !== null && !bucket.canTake(nowMs)) {
      this.scheduleRefill(topic, group, bucket.nextAtMs(nowMs));
      return;
    }
    group.held &= ~Held.rate;
    const rotation = topic.rotation;
    if (rotation !== null && rotation.place(group)) this.released(topic);
  }

  private scheduleRefill(topic: Topic<LiveItem>, group: Group<LiveItem> | null, atMs: number): void {
    const owner: { refillNode: HeapNode<RefillDeadline> | null } = group ?? topic;
    const node = owner.refillNode;
    if (node === null) owner.refillNode = this.deadlines.schedule(new Deadline(atMs, DeadlineKind.BoundRefill, { topic, group }));
    // A deadline left from a slower rate (the policy changed since): the token comes sooner now.
    else if (node.value.atMs > atMs) owner.refillNode = this.deadlines.reschedule(node, atMs);
  }
}
