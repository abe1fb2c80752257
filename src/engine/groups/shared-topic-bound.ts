// Cluster mode: what a node holds of a topic's own max_leased and rate,
// shared with the other nodes (docs/CLUSTER.md, "Topic bounds across
// nodes"), as the engine sees it. The node's side is cluster/
// topic-bound-leases.ts; the engine asks through shared-topic-gate.ts. Kept
// apart from the gate so ready/topic.ts can hold an entry without importing
// the gate (which imports the topic).

/** What the node holds of one topic's shared bounds. It outlives shard moves; a retired one is asked for again. */
export interface SharedTopicBound {
  /** The node dropped this entry (the topic's policy went): the topic asks for a new one. */
  readonly retired: boolean;
  /** Rate tokens this node holds for the topic, for a rate of `count` per `perMs` (a changed rate resizes the lease). */
  rateHeld(count: number, perMs: number): number;
  /** A dequeue wanted `wanted` more deliveries than the tokens held allow: draw. */
  rateShort(wanted: number, nowMs: number): void;
  /** Take one token (the caller saw one held). */
  takeToken(nowMs: number): void;
  /** Slots this node holds for the topic on `shard` (0 on a shard it does not serve). */
  slots(shard: number): number;
  /** A delivery of the topic on `shard` used a slot (the shard is not idle). */
  slotUsed(shard: number, nowMs: number): void;
  /** A dequeue would take an item on `shard`, whose slots are all leased (`leased` there): draw up to `wanted` more. */
  slotsShort(shard: number, wanted: number, leased: number, maxLeased: number, nowMs: number): void;
}

/** The node's entries, one per (ns, topic), made on first ask. */
export interface SharedTopicBounds {
  of(ns: string, topic: string): SharedTopicBound;
}
