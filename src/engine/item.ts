// One live item in memory: its stored record (kept current and written as a
// snapshot on each change), its state, and the handles that let every index
// drop it without a scan (its ready-heap node, its delay/lease deadline, its
// TTL deadline). Ended items leave memory; only their outcome stays.

import type { HeapNode } from "../lib/pairing-heap.ts";
import type { ItemRecord } from "../storage/record.ts";
import type { ItemKey } from "../storage/store.ts";
import type { LiveStateName } from "./api.ts";
import type { Deadline } from "./deadlines.ts";
import type { Topic } from "./topic.ts";

export class LiveItem {
  state: LiveStateName;
  /** In a shard heap of its signature group while ready and committed. */
  readyNode: HeapNode<LiveItem> | null = null;
  /** The delay-due deadline while delayed, the lease-expiry deadline while leased. */
  timerNode: HeapNode<Deadline> | null = null;
  /** The last timer node once it fired or was cancelled, reused for the next one. */
  spareTimer: HeapNode<Deadline> | null = null;
  /** The TTL deadline, until it fires. */
  ttlNode: HeapNode<Deadline> | null = null;
  /** The TTL passed while leased: the lease may still be acked; any other end of it ends the item `expired`. */
  ttlPassed = false;
  /**
   * False until the enqueue's commit is durable: such an item counts in its
   * state but sits in no ready heap, so it cannot be delivered before it is stored.
   */
  committed: boolean;
  /** The enqueue's durable promise while not committed (an idempotent re-enqueue waits on it too). */
  commit: Promise<void> | null = null;

  constructor(
    readonly id: string,
    readonly shard: number,
    readonly key: ItemKey,
    readonly record: ItemRecord,
    readonly topic: Topic,
    readonly signatureId: number,
    state: LiveStateName,
    committed: boolean,
  ) {
    this.state = state;
    this.committed = committed;
  }

  get ns(): string {
    return this.record.ns;
  }
}

/** Delivery order: priority, then deliverAtMs, then enqueue order (keys are global and monotonic). */
export function readyLess(a: LiveItem, b: LiveItem): boolean {
  const ra = a.record;
  const rb = b.record;
  if (ra.priority !== rb.priority) return ra.priority < rb.priority;
  if (ra.deliverAtMs !== rb.deliverAtMs) return ra.deliverAtMs < rb.deliverAtMs;
  return a.key < b.key;
}

/** A copy of the record for a WriteSet, so later in-memory changes cannot leak into an earlier write. */
export function snapshot(record: ItemRecord): ItemRecord {
  return { ...record };
}
