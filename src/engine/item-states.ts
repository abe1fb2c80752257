// Every live item and retained outcome, and every state transition between
// them: where an item sits (ready heap, deadline, dependency graph, dead
// letters), its per-state counts, its writes, and what its end does to items
// waiting on it. The Engine (engine.ts) runs the ops on top of this; recovery
// (recovery.ts) fills it from the store. Writes of one op collect in one
// WriteSet (`ws()`), which the op ends before it replies. A write of a stored
// item (writeItem) patches the state fields of a copy of its stored value
// (record-codec.ts's patchItemState: no decode, no encode, and the payload
// for a delivery is copied out of it); when memory holds what the stored
// value lacks (the enqueue's bytes before its commit, a nack's metadata, a
// dead reason or `after` list added or dropped, a value of an older record
// version) it writes the whole record instead (recordOf, which reads the
// payload and metadata back from the store: bytesOf).

import { assert } from "../lib/assert.ts";
import type { HeapNode } from "../lib/pairing-heap.ts";
import type { Limits } from "../limits.ts";
import type { ItemRecord, Outcome } from "../storage/record.ts";
import { ItemStatePatch, itemShapeFlags, itemValueBytes, patchItemState } from "../storage/record-codec.ts";
import type { Store } from "../storage/store.ts";
import type { WriteSet, Writer } from "../storage/writer.ts";
import type { Delivery, LiveStateName } from "./api.ts";
import { type Deadline, DeadlineKind, DeadlineQueue } from "./deadlines.ts";
import { type DependencyStatus, DependencyGraph } from "./dependencies.ts";
import { formatReceipt } from "./ids.ts";
import { type LiveItem, toRecord } from "./item.ts";
import { ItemTable } from "./item-table.ts";
import { OutcomeTable, RetainedOutcome } from "./outcome-table.ts";
import { SignatureRegistry } from "./matching/index.ts";
import { Namespace } from "./namespace.ts";
import type { Topic } from "./topic.ts";

export class ItemStates {
  readonly items = new ItemTable();
  readonly outcomes = new OutcomeTable();
  readonly namespaces = new Map<string, Namespace>();
  readonly deadlines = new DeadlineQueue();
  readonly registry = new SignatureRegistry();
  readonly graph: DependencyGraph;
  /** The WriteSet of the op in progress; every op ends it before returning. */
  set: WriteSet | null = null;
  /** Topics that gained takeable items during this op: their waiters are served at its end. */
  readonly dirty = new Set<Topic>();
  backgroundWriteFailures = 0;
  /** Scratch for writeItem (one write at a time). */
  private readonly patch = new ItemStatePatch();

  constructor(
    readonly writer: Writer,
    /** Where stored payloads and metadata are read back from (memory drops them once stored). */
    private readonly reader: Pick<Store, "readItem" | "readItemBytes">,
    readonly limits: Limits,
    private readonly quotas: Record<string, { enqueuePerMinute: number | null }>,
    /** This open of the store (MetaRecord.boots): every lease granted now records it, and its receipt names it. */
    readonly boot: number,
  ) {
    assert(Number.isSafeInteger(boot) && boot >= 1, `engine: boot ${boot} (a store numbers its opens from 1)`);
    this.graph = new DependencyGraph(limits.afterIdsMax);
  }

  dependencyStatus(ns: string, id: string): DependencyStatus {
    const item = this.items.get(id);
    if (item !== undefined) {
      if (item.ns !== ns) return "unknown";
      return item.state === "dead" ? "dead" : "live";
    }
    const outcome = this.outcomes.get(id);
    if (outcome === undefined || outcome.ns !== ns) return "unknown";
    return outcome.outcome;
  }

  /** Lease a ready item and return its delivery (the stored value is read once, for the write and the reply). */
  lease(item: LiveItem, leaseMs: number | null, nowMs: number, set: WriteSet): Delivery {
    item.topic.removeReady(item);
    this.leave(item);
    item.attempt++;
    item.deliveries++;
    item.leaseBoot = this.boot;
    const leaseExpiresAtMs = nowMs + (leaseMs ?? item.leaseMs);
    item.leaseExpiresAtMs = leaseExpiresAtMs;
    this.enter(item, "leased");
    item.timer = this.deadlines.scheduleItem(item.timer, leaseExpiresAtMs, DeadlineKind.Lease, item);
    let payload: Uint8Array;
    let metadata: Uint8Array;
    const value = this.patchedValue(item);
    if (value !== null) {
      set.putItemBytes(item.shard, item.key, value);
      const bytes = itemValueBytes(value);
      payload = bytes.payload;
      metadata = bytes.metadata;
    } else {
      const record = this.recordOf(item);
      set.putItem(item.shard, item.key, record);
      payload = record.payload;
      metadata = record.metadata;
    }
    const id = item.id;
    return {
      id,
      topic: item.topic.name,
      priority: item.priority,
      payload,
      metadata,
      attempt: item.attempt,
      receipt: formatReceipt(id, item.deliveries, this.boot),
      leaseExpiresAtMs,
      enqueuedAtMs: item.enqueuedAtMs,
    };
  }

  /** Give the item a new priority (it must be out of the ready index): every later write carries the whole record. */
  setPriority(item: LiveItem, priority: number): void {
    assert(item.readyNode === null, `engine: priority change of item ${item.id} inside a ready heap`);
    if (priority === item.priority) return;
    item.priority = priority;
    item.ensureExtras().priorityRewritten = true;
  }

  /** Write the item's current state into `set`: a patched copy of its stored value when possible, else the whole record. */
  writeItem(set: WriteSet, item: LiveItem): void {
    const value = this.patchedValue(item);
    if (value !== null) set.putItemBytes(item.shard, item.key, value);
    else set.putItem(item.shard, item.key, this.recordOf(item));
  }

  /**
   * A copy of the item's stored value with its state fields set from memory,
   * or null when memory holds something the stored value lacks (see the file
   * header) and the whole record must be written.
   */
  private patchedValue(item: LiveItem): Uint8Array | null {
    const extras = item.extras;
    if (extras !== null && (extras.unstored !== null || extras.metadata !== null || extras.priorityRewritten)) return null;
    const value = this.reader.readItemBytes(item.shard, item.key);
    // Messages are built only on failure (this runs once per lease).
    if (value === null) assert(false, `engine: item ${item.id} is live but not stored`);
    const patch = this.patch;
    patch.shapeFlags =
      extras === null
        ? itemShapeFlags(false, false, false, false, false, item.delivery === "at_most_once")
        : itemShapeFlags(
            extras.ttlExpiresAtMs !== null,
            extras.deadReason !== null,
            extras.requires !== null,
            extras.after !== null,
            extras.key !== null,
            item.delivery === "at_most_once",
          );
    patch.state = item.storedState;
    patch.deliverAtMs = item.deliverAtMs;
    patch.leaseExpiresAtMs = item.leaseExpiresAtMs;
    patch.attempt = item.attempt;
    patch.deliveries = item.deliveries;
    patch.leaseBoot = item.leaseBoot;
    return patchItemState(value, patch) ? value : null;
  }

  /**
   * The item's payload and metadata: memory's until the enqueue is durable (and
   * metadata a nack set), the store's otherwise. A committed item the store
   * does not hold is a broken invariant (its enqueue committed; only its end
   * deletes it, and that takes it out of memory first).
   */
  bytesOf(item: LiveItem): { payload: Uint8Array; metadata: Uint8Array } {
    const unstored = item.unstored;
    if (unstored !== null) return unstored;
    const stored = this.reader.readItem(item.shard, item.key);
    // Messages are built only on failure (these run once per delivery or deadline).
    if (stored === null) assert(false, `engine: item ${item.id} is live but not stored`);
    const metadata = item.extras?.metadata ?? stored.metadata;
    return { payload: stored.payload, metadata };
  }

  /** The item as a record for a write (a fresh object: later changes cannot leak into it). */
  recordOf(item: LiveItem): ItemRecord {
    const bytes = this.bytesOf(item);
    return toRecord(item, bytes.payload, bytes.metadata);
  }

  leaseExpired(item: LiveItem, nowMs: number): void {
    if (item.ttlPassed || item.delivery === "at_most_once") {
      this.endItem(item, "expired", nowMs);
    } else if (item.attempt >= item.maxAttempts) {
      this.killItem(item, "max_attempts");
    } else {
      this.leave(item);
      item.leaseExpiresAtMs = null;
      this.placePending(item, nowMs);
      this.writeItem(this.ws(), item);
    }
  }

  /** Handle a due item or outcome deadline (waiter timeouts are the Engine's). */
  handleDeadline(deadline: Deadline, nowMs: number): void {
    switch (deadline.kind) {
      case DeadlineKind.Due: {
        const item = deadline.item as LiveItem;
        if (item.state !== "delayed") assert(false, `engine: due deadline for a ${item.state} item`);
        this.leave(item);
        this.enter(item, "ready");
        this.makeTakeable(item);
        return;
      }
      case DeadlineKind.Lease: {
        const item = deadline.item as LiveItem;
        if (item.state !== "leased") assert(false, `engine: lease deadline for a ${item.state} item`);
        this.leaseExpired(item, nowMs);
        return;
      }
      case DeadlineKind.Ttl: {
        const item = deadline.item as LiveItem;
        const extras = item.ensureExtras();
        extras.ttlNode = null;
        if (item.state === "leased") extras.ttlPassed = true;
        else this.endItem(item, "expired", nowMs);
        return;
      }
      case DeadlineKind.OutcomeRetention: {
        const outcome = deadline.outcome as RetainedOutcome;
        this.outcomes.delete(outcome);
        this.ws().deleteOutcome(outcome.id);
        return;
      }
    }
  }

  enter(item: LiveItem, state: LiveStateName): void {
    item.state = state;
    item.topic.count(state, 1);
  }

  leave(item: LiveItem): void {
    item.topic.count(item.state, -1);
  }

  enterDead(item: LiveItem): void {
    this.enter(item, "dead");
    item.topic.deadLetters.add(item);
    this.namespaces.get(item.ns)!.counters.dead++;
  }

  /** A pending item (in no index, counted nowhere) takes its place: waiting, delayed or ready. */
  placePending(item: LiveItem, nowMs: number): void {
    // waitingCount first: most stores have no `after` edges, and an id string per item costs.
    if (this.graph.waitingCount > 0 && this.graph.isWaiting(item.id)) {
      this.enter(item, "waiting");
    } else if (item.deliverAtMs > nowMs) {
      this.enter(item, "delayed");
      item.timer = this.deadlines.scheduleItem(item.timer, item.deliverAtMs, DeadlineKind.Due, item);
    } else {
      this.enter(item, "ready");
      this.makeTakeable(item);
    }
  }

  makeTakeable(item: LiveItem): void {
    if (!item.committed) return;
    item.topic.insertReady(item);
    this.dirty.add(item.topic);
  }

  /** Take the item out of the index of its current state (its count stays until leave()). */
  unplace(item: LiveItem): void {
    switch (item.state) {
      case "ready":
        if (item.readyNode !== null) item.topic.removeReady(item);
        return;
      case "delayed":
      case "leased": {
        const timer = item.timerNode;
        if (timer !== null) this.deadlines.cancel(timer);
        return;
      }
      case "waiting":
        this.graph.remove(item.id);
        return;
      case "dead":
        item.topic.deadLetters.delete(item);
        return;
    }
  }

  /** Drop an item from memory (already unplaced and uncounted). */
  forget(item: LiveItem): void {
    const extras = item.extras;
    if (extras !== null && extras.ttlNode !== null) {
      this.deadlines.cancel(extras.ttlNode);
      extras.ttlNode = null;
    }
    this.items.delete(item);
    const key = item.idempotencyKey;
    if (key !== null && item.topic.keys.get(key) === item) item.topic.keys.delete(key);
    item.topic.leaveGroup(item.signatureId);
    this.registry.release(item.signatureId);
    this.namespaces.get(item.ns)!.dropIfEmpty(item.topic);
  }

  /** The item ends: removed from memory and disk, its outcome kept for outcomeRetentionMs; dependents learn of it. */
  endItem(item: LiveItem, outcome: Outcome, nowMs: number): void {
    this.unplace(item);
    this.leave(item);
    this.forget(item);
    const ns = item.ns;
    const id = item.id;
    const set = this.ws();
    set.deleteItem(item.shard, item.key);
    // The entry is the record written too: one object per ended item.
    const retained = new RetainedOutcome(item.shard, item.key, ns, outcome, nowMs);
    set.putOutcome(id, retained);
    retained.node = this.deadlines.schedule(nowMs + this.limits.outcomeRetentionMs, DeadlineKind.OutcomeRetention, null, null, retained);
    const previous = this.outcomes.set(retained);
    if (previous !== undefined) this.deadlines.cancel(previous.node as HeapNode<Deadline>);
    this.namespaces.get(ns)!.counters[outcome]++;
    // Most stores have no `after` edges: skip the graph's lookups by id then.
    if (this.graph.edgeCount === 0) return;
    if (outcome === "acked") {
      for (const dependentId of this.graph.onAcked(id)) {
        const dependent = this.items.get(dependentId);
        if (dependent === undefined || dependent.state !== "waiting") continue;
        this.leave(dependent);
        this.placePending(dependent, nowMs);
      }
    } else {
      this.killDependents(id, outcome);
    }
  }

  /** The item becomes a dead letter: kept and listed by `dead`, not delivered; its dependents die too. */
  killItem(item: LiveItem, reason: string): void {
    this.unplace(item);
    this.leave(item);
    item.ensureExtras().deadReason = reason;
    item.leaseExpiresAtMs = null;
    this.enterDead(item);
    this.writeItem(this.ws(), item);
    this.killDependents(item.id, "dead");
  }

  killDependents(id: string, how: "cancelled" | "expired" | "dead"): void {
    for (const killed of this.graph.onFailed(id, how)) {
      const dependent = this.items.get(killed.itemId);
      if (dependent === undefined || dependent.state !== "waiting") continue;
      // The graph already dropped it and its own dependents (they come later in this same list).
      this.killItem(dependent, killed.deadReason);
    }
  }

  namespace(name: string, nowMs: number): Namespace {
    let ns = this.namespaces.get(name);
    if (ns === undefined) {
      ns = new Namespace(name, this.quotas[name]?.enqueuePerMinute ?? null, nowMs);
      this.namespaces.set(name, ns);
    }
    return ns;
  }

  ws(): WriteSet {
    if (this.set === null) this.set = this.writer.begin();
    return this.set;
  }

  endSet(): Promise<void> | null {
    const set = this.set;
    if (set === null) return null;
    this.set = null;
    return set.end();
  }

  endSetBackground(): void {
    const end = this.endSet();
    if (end !== null) end.catch(this.onBackgroundFailure);
  }

  /** Writes nobody waits on (ticks, at_least_once leases) that failed: memory is ahead of disk until a restart. */
  readonly onBackgroundFailure = (_error: unknown): void => {
    this.backgroundWriteFailures++;
  };
}
