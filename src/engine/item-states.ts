// Every live item and retained outcome, and every state transition between
// them. Ops call the transitions (lease, release, readyNow, extendLease,
// admit, stored, discard, endItem, killItem); the parts they are made of are
// private: where an item sits (ready heap, deadline, dependency graph, dead
// letters), its per-state counts, its writes, and what its end does to items
// waiting on it. Recovery (recovery.ts) fills it from the store. Writes of one
// op collect in one WriteSet (`ws()`), which the op ends before it replies;
// how an item is written (a patched stored value, or the whole record) is
// item-bytes.ts's business, and the record layout storage's.

import { assert } from "../lib/assert.ts";
import type { Limits } from "../limits.ts";
import type { Outcome } from "../storage/record.ts";
import type { Store } from "../storage/store.ts";
import type { Commit, CommitListener, WriteSet, Writer } from "../storage/writer.ts";
import type { Delivery, LiveStateName } from "./api.ts";
import { DeadlineKind, DeadlineQueue } from "./deadlines.ts";
import type { EngineDeadline, ItemStatesDeadline } from "./engine-deadlines.ts";
import { type DependencyStatus, DependencyGraph } from "./dependencies.ts";
import { ReceiptFormat } from "./ids.ts";
import { ItemSettingsTable } from "./item-parts.ts";
import { toDelivery } from "./views.ts";
import { EndedItems } from "./ended-items.ts";
import { DeferredLeaseWrites } from "./deferred-lease-writes.ts";
import type { LiveItem } from "./item.ts";
import { ItemBytes } from "./item-bytes.ts";
import { ItemTable } from "./item-table.ts";
import { SignatureRegistry } from "./matching/index.ts";
import { SettleHooks } from "./settle-hooks.ts";
import { Namespace, NamespaceMap } from "./namespace.ts";
import type { QuotaBuckets } from "./quota.ts";
import type { Topic } from "./topic.ts";

export class ItemStates {
  readonly items = new ItemTable();
  readonly namespaces = new NamespaceMap();
  readonly deadlines = new DeadlineQueue<EngineDeadline>();
  /** How ended items ended, for `get` and `after` (ended-items.ts). */
  readonly ended: EndedItems;
  readonly registry = new SignatureRegistry();
  readonly graph: DependencyGraph;
  /** The WriteSet of the op in progress; every op ends it before returning. */
  set: WriteSet | null = null;
  /** Hooks run once the open set's commit settles (settle-hooks.ts). */
  readonly settleHooks = new SettleHooks();
  /** Topics that gained takeable items during this op: their waiters are served at its end. */
  readonly dirty = new Set<Topic<LiveItem>>();
  backgroundWriteFailures = 0;
  /** At_least_once leases granted and not yet written (lease), and the one deadline that writes them. */
  private readonly deferredLeases: DeferredLeaseWrites;
  /** Reads stored payloads back and writes items, patched or whole (item-bytes.ts). */
  readonly bytes: ItemBytes;
  /** This engine's receipts (their tails kept, ids.ts) and shared item settings (item-parts.ts). */
  readonly receipts: ReceiptFormat;
  readonly settings = new ItemSettingsTable();

  constructor(
    readonly writer: Writer,
    /** Where stored payloads and metadata are read back from (memory drops them once stored). */
    reader: Pick<Store, "readItem" | "readItemBytes">,
    readonly limits: Limits,
    private readonly bucketFor: QuotaBuckets,
    /** This open of the store (MetaRecord.boots): every lease granted now records it, and its receipt names it. */
    readonly boot: number,
  ) {
    assert(Number.isSafeInteger(boot) && boot >= 1, `engine: boot ${boot} (a store numbers its opens from 1)`);
    this.graph = new DependencyGraph(limits.afterIdsMax);
    this.ended = new EndedItems(writer.shardCount, this.deadlines, limits);
    this.deferredLeases = new DeferredLeaseWrites(this.deadlines);
    this.bytes = new ItemBytes(reader);
    this.receipts = new ReceiptFormat(boot);
  }

  dependencyStatus(ns: string, id: string): DependencyStatus {
    const item = this.items.get(id);
    if (item !== undefined) {
      if (item.ns !== ns) return "unknown";
      return item.state === "dead" ? "dead" : "live";
    }
    return this.ended.outcomeOfId(ns, id) ?? "unknown";
  }

  /**
   * Lease a ready item and return its delivery. Given a `set` (at_most_once
   * leases, and every lease in cluster mode), the lease is written into it
   * and the delivery waits for that commit (the stored value is read once,
   * for the write and the reply). Without, an at_least_once lease is written
   * leaseWriteDelayMs later (limits.ts says why), unless a later write of the
   * item (ack, nack, expiry, extend) comes first.
   */
  lease(item: LiveItem, leaseMs: number | null, nowMs: number, set: WriteSet | null): Delivery {
    item.topic.removeReady(item);
    this.leave(item);
    item.attempt++;
    item.deliveries++;
    item.leaseBoot = this.boot;
    const leaseExpiresAtMs = nowMs + (leaseMs ?? item.leaseMs);
    item.leaseExpiresAtMs = leaseExpiresAtMs;
    this.enter(item, "leased");
    this.deadlines.scheduleNode(item.idleTimer(), leaseExpiresAtMs, DeadlineKind.Lease);
    let bytes: { payload: Uint8Array; metadata: Uint8Array; enqueuedAtMs: number };
    if (set === null) {
      assert(item.delivery === "at_least_once", "engine: an at_most_once lease needs the dequeue's write set");
      const read = this.bytes.deliveryBytes(item);
      this.deferredLeases.add(item, read.stored, nowMs);
      bytes = read;
    } else {
      const value = this.bytes.patchedValue(item);
      if (value !== null) {
        set.putItemBytes(item.shard, item.key, value);
        bytes = this.bytes.valueBytes(item, value);
      } else {
        const record = this.bytes.recordOf(item);
        set.putItem(item.shard, item.key, record);
        bytes = record;
      }
    }
    return toDelivery(item, bytes.payload, bytes.metadata, bytes.enqueuedAtMs, this.receipts);
  }

  /** Give the item a new priority (it must be out of the ready index): every later write carries the whole record. */
  private setPriority(item: LiveItem, priority: number): void {
    assert(!item.inReadyHeap, `engine: priority change of item ${item.id} inside a ready heap`);
    if (priority === item.priority) return;
    item.priority = priority;
    item.ensureExtras().priorityRewritten = true;
  }

  /**
   * Write every deferred lease whose item is still leased (its current lease: a later one may have
   * replaced it). Any other write of the item since carried its state already; an item listed twice
   * is written twice into one set, which the commit coalesces.
   */
  flushLeaseWrites(all: boolean): void {
    const { items, storedCopies } = all ? this.deferredLeases.takeAll() : this.deferredLeases.takeDue();
    if (items.length === 0) return;
    const set = this.ws();
    for (const [i, item] of items.entries()) if (item.state === "leased" && this.items.holds(item)) this.bytes.writeItem(set, item, storedCopies[i] as Uint8Array);
  }

  leaseExpired(item: LiveItem, nowMs: number): void {
    if (item.ttlPassed || item.delivery === "at_most_once") this.endItem(item, "expired", nowMs);
    else if (item.attempt >= item.maxAttempts) this.killItem(item, "max_attempts");
    else this.release(item, item.deliverAtMs, nowMs);
  }

  // ---- transitions the ops use (each places, counts and writes the item itself) ----

  /**
   * A leased item (its delivery ended: nack, lease expiry, a lease that never
   * became durable), a dead letter (redrive) or a delayed item made due now
   * (beanstalkd's kick) goes back to pending, deliverable
   * from deliverAtMs: waiting, delayed or ready, with a new priority when one is
   * given (beanstalkd's release). Its lease is cleared and it is written.
   */
  release(item: LiveItem, deliverAtMs: number, nowMs: number, priority: number | null = null): void {
    this.unplace(item);
    this.leave(item);
    if (priority !== null) this.setPriority(item, priority);
    item.leaseExpiresAtMs = null;
    item.deliverAtMs = deliverAtMs;
    this.placePending(item, nowMs);
    this.bytes.writeItem(this.ws(), item);
  }

  /**
   * A delayed item or a dead letter becomes ready at once, its dead reason
   * dropped (beanstalkd's reserve-job of such a job); the lease that follows
   * writes it.
   */
  readyNow(item: LiveItem): void {
    this.unplace(item);
    this.leave(item);
    if (item.extras !== null) item.extras.deadReason = null;
    this.enter(item, "ready");
    this.makeTakeable(item);
  }

  /** A leased item's lease now ends at expiresAtMs (extend): its deadline moves and it is written. */
  extendLease(item: LiveItem, expiresAtMs: number): void {
    item.leaseExpiresAtMs = expiresAtMs;
    this.deadlines.reschedule(item.timerNode!, expiresAtMs);
    this.bytes.writeItem(this.ws(), item);
  }

  /** A new item takes its first place: a dead letter (a dependency already failed) or pending. Its record is the enqueue's write. */
  admit(item: LiveItem, deadReason: string | null, nowMs: number): void {
    if (deadReason !== null) {
      item.ensureExtras().deadReason = deadReason;
      this.enterDead(item);
    } else {
      this.placePending(item, nowMs);
    }
  }

  /** The item's enqueue is durable: memory drops its bytes, and a ready item becomes takeable. */
  stored(item: LiveItem): void {
    item.markStored();
    if (item.state === "ready" && !item.inReadyHeap) this.makeTakeable(item);
  }

  /** An item whose enqueue never committed leaves memory as if never enqueued (nothing of it is stored). */
  discard(item: LiveItem): void {
    this.unplace(item);
    this.leave(item);
    this.forget(item);
  }

  /** Handle a due item or outcome deadline (waiter timeouts are the Engine's). */
  handleDeadline(deadline: ItemStatesDeadline, nowMs: number): void {
    switch (deadline.kind) {
      case DeadlineKind.Due: {
        const item = deadline.target;
        if (item.state !== "delayed") assert(false, `engine: due deadline for a ${item.state} item`);
        this.leave(item);
        this.enter(item, "ready");
        this.makeTakeable(item);
        return;
      }
      case DeadlineKind.Lease: {
        const item = deadline.target;
        if (item.state !== "leased") assert(false, `engine: lease deadline for a ${item.state} item`);
        this.leaseExpired(item, nowMs);
        return;
      }
      case DeadlineKind.Ttl: {
        const item = deadline.target;
        const extras = item.ensureExtras();
        extras.ttlNode = null;
        if (item.state === "leased") extras.ttlPassed = true;
        else this.endItem(item, "expired", nowMs);
        return;
      }
      case DeadlineKind.LeaseWrites:
        this.flushLeaseWrites(false);
        return;
      case DeadlineKind.OutcomeRetention:
      case DeadlineKind.AckedRetention:
        this.ended.handleDeadline(deadline, nowMs, this.ws);
        return;
    }
  }

  enter(item: LiveItem, state: LiveStateName): void {
    item.state = state;
    item.topic.count(state, 1);
  }

  private leave(item: LiveItem): void {
    item.topic.count(item.state, -1);
  }

  private enterDead(item: LiveItem): void {
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
      this.deadlines.scheduleNode(item.idleTimer(), item.deliverAtMs, DeadlineKind.Due);
    } else {
      this.enter(item, "ready");
      this.makeTakeable(item);
    }
  }

  private makeTakeable(item: LiveItem): void {
    if (!item.committed) return;
    item.topic.insertReady(item);
    this.dirty.add(item.topic);
  }

  /** Take the item out of the index of its current state (its count stays until leave()). */
  private unplace(item: LiveItem): void {
    switch (item.state) {
      case "ready":
        if (item.inReadyHeap) item.topic.removeReady(item);
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
  private forget(item: LiveItem): void {
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
    this.ended.record(ns, item.shard, item.key, outcome, nowMs, this.ws());
    this.namespaces.get(ns)!.counters[outcome]++;
    // Most stores have no `after` edges: skip the graph's lookups by id then.
    if (this.graph.edgeCount === 0) return;
    const id = item.id;
    if (outcome === "acked") {
      for (const dependentId of this.graph.onAcked(id)) {
        const dependent = this.items.get(dependentId);
        if (dependent === undefined || dependent.state !== "waiting") continue;
        this.dependencyMet(dependent, nowMs);
      }
    } else {
      this.killDependents(id, outcome);
    }
  }

  /** A waiting item's last dependency was acked (here, or on another node's shard): it takes its place. */
  dependencyMet(item: LiveItem, nowMs: number): void {
    this.leave(item);
    this.placePending(item, nowMs);
  }

  /** The item becomes a dead letter: kept and listed by `dead`, not delivered; its dependents die too. */
  killItem(item: LiveItem, reason: string, priority: number | null = null): void {
    this.makeDead(item, reason, priority);
    this.killDependents(item.id, "dead");
  }

  /** Every item waiting on `id`, directly or through others, dies: DependencyGraph.onFailed walks that closure with one work list, so one loop here and no recursion at any depth. */
  killDependents(id: string, how: "cancelled" | "expired" | "dead"): void {
    for (const killed of this.graph.onFailed(id, how)) {
      const dependent = this.items.get(killed.itemId);
      if (dependent === undefined || dependent.state !== "waiting") continue;
      this.makeDead(dependent, killed.deadReason, null);
    }
  }

  /** One item becomes a dead letter (its dependents are the caller's). */
  private makeDead(item: LiveItem, reason: string, priority: number | null): void {
    this.unplace(item);
    this.leave(item);
    if (priority !== null) this.setPriority(item, priority);
    item.ensureExtras().deadReason = reason;
    item.leaseExpiresAtMs = null;
    this.enterDead(item);
    this.bytes.writeItem(this.ws(), item);
  }

  namespace(name: string, nowMs: number): Namespace {
    let ns = this.namespaces.get(name);
    if (ns === undefined) {
      ns = new Namespace(name, this.bucketFor(name, nowMs), this.namespaces);
      this.namespaces.set(name, ns);
    }
    return ns;
  }

  /** The open WriteSet of the op in progress (begun on first use). An arrow: EndedItems calls it unbound. */
  readonly ws = (): WriteSet => {
    if (this.set === null) this.set = this.writer.begin();
    return this.set;
  };

  /** End the op's WriteSet: the Commit to listen on (or ask for a promise: storage/writer.ts); null when nothing was begun. */
  closeSet(): Commit | null {
    const set = this.set;
    if (set === null) return null;
    this.set = null;
    return this.settleHooks.attach(set.close());
  }

  endSetBackground(): void {
    this.closeSet()?.listen(this.background);
  }

  /** Writes nobody waits on (ticks, at_least_once leases): one that failed leaves memory ahead of disk until a restart. */
  private readonly background: CommitListener = { committed() {}, failed: () => void this.backgroundWriteFailures++ };
}
