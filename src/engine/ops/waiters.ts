// Parked dequeues (long-poll). Each waiter sits in the queue of every topic it
// listed, in arrival order, and in its owner's set (so a closed connection
// drops its waiters). The engine serves a topic's waiters first come, first
// served when items become takeable there, and resolves them empty on timeout.

import type { HeapNode } from "../../lib/pairing-heap.ts";
import type { DequeueDone } from "../api.ts";
import type { Deadline, DeadlineKind } from "../time/deadlines.ts";
import type { Capabilities } from "../matching/index.ts";

/** A parked dequeue's timeout. */
export type WaiterDeadline = Deadline<typeof DeadlineKind.WaiterTimeout, Waiter>;

export class Waiter {
  timeoutNode: HeapNode<WaiterDeadline> | null = null;
  settled = false;
  constructor(
    readonly owner: number,
    readonly ns: string,
    readonly topics: ReadonlyArray<{ topic: string; count: number }>,
    /** Kept rather than a worker kind: kind ids may be evicted while the waiter is parked. */
    readonly capabilities: Capabilities | null,
    readonly leaseMs: number | null,
    readonly resolve: (done: DequeueDone) => void,
  ) {}
}

export class WaiterRegistry {
  /** ns -> topic -> waiters in arrival order (a Set keeps insertion order and deletes in O(1)). */
  private readonly byTopic = new Map<string, Map<string, Set<Waiter>>>();
  private readonly byOwner = new Map<number, Set<Waiter>>();
  private readonly byNamespace = new Map<string, number>();
  private count = 0;

  get total(): number {
    return this.count;
  }

  ownerCount(owner: number): number {
    return this.byOwner.get(owner)?.size ?? 0;
  }

  namespaceCount(ns: string): number {
    return this.byNamespace.get(ns) ?? 0;
  }

  add(waiter: Waiter): void {
    let topics = this.byTopic.get(waiter.ns);
    if (topics === undefined) {
      topics = new Map();
      this.byTopic.set(waiter.ns, topics);
    }
    for (const { topic } of waiter.topics) {
      let set = topics.get(topic);
      if (set === undefined) {
        set = new Set();
        topics.set(topic, set);
      }
      set.add(waiter);
    }
    let owned = this.byOwner.get(waiter.owner);
    if (owned === undefined) {
      owned = new Set();
      this.byOwner.set(waiter.owner, owned);
    }
    owned.add(waiter);
    this.byNamespace.set(waiter.ns, this.namespaceCount(waiter.ns) + 1);
    this.count++;
  }

  remove(waiter: Waiter): void {
    const topics = this.byTopic.get(waiter.ns);
    if (topics !== undefined) {
      for (const { topic } of waiter.topics) {
        const set = topics.get(topic);
        if (set === undefined) continue;
        set.delete(waiter);
        if (set.size === 0) topics.delete(topic);
      }
      if (topics.size === 0) this.byTopic.delete(waiter.ns);
    }
    const owned = this.byOwner.get(waiter.owner);
    if (owned !== undefined && owned.delete(waiter)) {
      if (owned.size === 0) this.byOwner.delete(waiter.owner);
      const n = this.namespaceCount(waiter.ns) - 1;
      if (n === 0) this.byNamespace.delete(waiter.ns);
      else this.byNamespace.set(waiter.ns, n);
      this.count--;
    }
  }

  forTopic(ns: string, topic: string): Set<Waiter> | undefined {
    return this.byTopic.get(ns)?.get(topic);
  }

  ofOwner(owner: number): Waiter[] {
    const owned = this.byOwner.get(owner);
    return owned === undefined ? [] : [...owned];
  }

  all(): Waiter[] {
    const out: Waiter[] = [];
    for (const owned of this.byOwner.values()) for (const w of owned) out.push(w);
    return out;
  }
}
