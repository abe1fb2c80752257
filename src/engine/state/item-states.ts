// Every live item and retained outcome, and every state transition between
// them. Its indexes are private: where an item sits (the item table, ready
// heaps, deadlines, the dependency graph, dead letters), its per-state counts,
// the signatures, the retained outcomes and its writes. Others read them
// through read-only views (items, namespaces, ended, graph, registry) and
// narrow queries, and change them only through the transitions below: the
// ops' (admit, lease, release, readyNow, extendLease, stored, discard,
// endItem, killItem, ...) and recovery's loader (loadOutcome, loadItem,
// placeLoadedItem, endLoad; recovery/recovery.ts sees only those, as ItemLoader).
// Writes of one op collect in one WriteSet (`ws()`), which the op ends before
// it replies; how an item is written (a patched stored value, or the whole
// record) is item-bytes.ts's business, and the record layout storage's.

import { assert } from "../../lib/assert.ts";
import type { Limits } from "../../limits.ts";
import type { ItemRecord, Outcome } from "../../storage/record.ts";
import type { ItemKey, Store } from "../../storage/store.ts";
import type { Commit, CommitListener, WriteSet, Writer } from "../../storage/writer.ts";
import type { Delivery, LiveStateName } from "../api.ts";
import { Deadline, DeadlineKind } from "../time/deadlines.ts";
import type { EngineDeadline, EngineDeadlines, ItemStatesDeadline } from "../time/engine-deadlines.ts";
import { type DependencyStatus, DependencyGraph, type ReadonlyDependencyGraph } from "./dependencies.ts";
import { ReceiptFormat } from "./ids.ts";
import { type ItemProgress, ItemSettingsTable, type UnstoredBytes } from "./item-parts.ts";
import type { HeapLinks, HeapNode } from "../../lib/pairing-heap.ts";
import { toDelivery } from "./views.ts";
import { EndedItems, type ReadonlyEndedItems } from "../outcomes/ended-items.ts";
import { DeferredLeaseWrites } from "../time/deferred-lease-writes.ts";
import { LiveItem } from "./item.ts";
import { ItemBytes, type ReadonlyItemBytes } from "./item-bytes.ts";
import { ItemTable, type ReadonlyItemTable } from "./item-table.ts";
import { parsePrefers, parseRequires, Preference, type ReadonlySignatureRegistry, type Requires, SignatureRegistry, signatureRegistryFull } from "../matching/index.ts";
import { RetainedOutcome } from "../outcomes/outcome-table.ts";
import { SettleHooks } from "./settle-hooks.ts";
import { Namespace, NamespaceMap, type ReadonlyNamespaceMap } from "./namespace.ts";
import type { QuotaBuckets } from "../admission/quota.ts";
import type { Topic } from "../ready/topic.ts";
import type { GroupRotation } from "../groups/group-rotation.ts";
import { topicKeyOf } from "../groups/group-key.ts";

/** A deadline that waits for its parked shard: an item's lease or TTL end, or an outcome's retention end. */
type ParkedDeadline = HeapLinks<ItemStatesDeadline> | ItemProgress<LiveItem>;

/** What recovery (recovery/recovery.ts) may use of ItemStates: the loader's transitions and the queries its dependency lookups need. */
export type ItemLoader = Pick<ItemStates, "limits" | "items" | "ended" | "loadOutcome" | "loadAckedOutcome" | "purgeAckedBefore" | "loadItem" | "placeLoadedItem" | "killItem" | "endLoad">;

export class ItemStates {
  private readonly table = new ItemTable();
  private readonly namespaceMap = new NamespaceMap();
  /** How ended items ended, for `get` and `after` (outcomes/ended-items.ts). */
  private readonly endedItems: EndedItems;
  private readonly signatures = new SignatureRegistry();
  private readonly dependencies: DependencyGraph;
  /** The WriteSet of the op in progress; every op ends it before returning. */
  private set: WriteSet | null = null;
  /** Hooks run once the open set's commit settles (settle-hooks.ts). */
  private readonly settleHooks = new SettleHooks();
  /** Topics that gained takeable items during this op: their waiters are served at its end. */
  private readonly dirty = new Set<Topic<LiveItem>>();
  private writeFailures = 0;
  /** At_least_once leases granted and not yet written (lease), and the one deadline that writes them. */
  private readonly deferredLeases: DeferredLeaseWrites;
  /** Reads stored payloads back and writes items, patched or whole (item-bytes.ts). */
  private readonly itemBytes: ItemBytes;
  /** This engine's receipts (their tails kept, ids.ts) and shared item settings (item-parts.ts). */
  private readonly receipts: ReceiptFormat;
  private readonly settings = new ItemSettingsTable();
  /** Writer.volatile, read once: at_least_once leases are then never written. */
  private readonly writerVolatile: boolean;

  /**
   * Shards the engine holds and does not serve (cluster mode's moves): the
   * lease, TTL and outcome-retention deadlines of their items that came due,
   * kept until the shard serves, since each would write it (decisions/053).
   */
  private readonly parked = new Map<number, ParkedDeadline[]>();

  constructor(
    private readonly writer: Writer,
    /** Where stored payloads and metadata are read back from (memory drops them once stored). */
    reader: Pick<Store, "readItem" | "readItemBytes" | "viewItemBytes" | "readDeliveryBytes">,
    readonly limits: Readonly<Limits>,
    private readonly bucketFor: QuotaBuckets,
    /** This open of the store (MetaRecord.boots): every lease granted now records it, and its receipt names it. */
    readonly boot: number,
    /** The engine's one deadline heap (the Engine's: waiters and pauses share it); item, lease-write and outcome deadlines go in here. */
    private readonly deadlines: EngineDeadlines,
  ) {
    assert(Number.isSafeInteger(boot) && boot >= 1, `engine: boot ${boot} (a store numbers its opens from 1)`);
    this.dependencies = new DependencyGraph(limits.afterIdsMax);
    this.endedItems = new EndedItems(writer.shardCount, this.deadlines, limits);
    this.deferredLeases = new DeferredLeaseWrites(this.deadlines);
    this.writerVolatile = writer.volatile === true;
    this.itemBytes = new ItemBytes(reader);
    this.receipts = new ReceiptFormat(boot);
  }

  // ---- read-only views and queries ----

  /** The live items by id and by shard and key. */
  get items(): ReadonlyItemTable {
    return this.table;
  }

  /** The namespaces by name, with their topics. */
  get namespaces(): ReadonlyNamespaceMap {
    return this.namespaceMap;
  }

  /** How ended items ended, while retained. */
  get ended(): ReadonlyEndedItems {
    return this.endedItems;
  }

  /** The `after` edges of waiting items. */
  get graph(): ReadonlyDependencyGraph {
    return this.dependencies;
  }

  /** The live requires signatures. */
  get registry(): ReadonlySignatureRegistry {
    return this.signatures;
  }

  /** Reads an item's payload and metadata (from memory until stored, then from the store). */
  get bytes(): ReadonlyItemBytes {
    return this.itemBytes;
  }

  /** Called as each item ends (ops/item-waits.ts wakes the `wait`s on it); null when nothing listens. */
  private endListener: ((key: ItemKey) => void) | null = null;

  /** Listen to every item's end (null: stop); one listener. */
  listenToEnds(listener: ((key: ItemKey) => void) | null): void {
    this.endListener = listener;
  }

  /** Whether an op's WriteSet is open (ops assert none is between them). */
  get setOpen(): boolean {
    return this.set !== null;
  }

  /** Background commits (ticks, at_least_once leases) that failed since start. */
  get backgroundWriteFailures(): number {
    return this.writeFailures;
  }

  /** The receipt of the item's current delivery. */
  receiptOf(item: LiveItem): string {
    return this.receipts.format(item.id, item.deliveries, item.leaseBoot);
  }

  dependencyStatus(ns: string, id: string): DependencyStatus {
    const item = this.table.get(id);
    if (item !== undefined) {
      if (item.ns !== ns) return "unknown";
      return item.state === "dead" ? "dead" : "live";
    }
    return this.endedItems.outcomeOfId(ns, id) ?? "unknown";
  }

  // ---- transitions the ops use (each places, counts and writes the item itself) ----

  /**
   * Lease a ready item and return its delivery. Given a `set` (at_most_once
   * leases, and every lease in cluster mode), the lease is written into it
   * and the delivery waits for that commit (the stored value is read once,
   * for the write and the reply). Without, an at_least_once lease is written
   * leaseWriteDelayMs later (limits.ts says why), unless a later write of the
   * item (ack, nack, expiry, extend) comes first; never under a volatile
   * writer (Writer.volatile).
   */
  lease(item: LiveItem, leaseMs: number | null, nowMs: number, set: WriteSet | null): Delivery {
    item.topic.removeReady(item);
    // A held item (prefer_wait_ms) has its release deadline on the node the lease needs.
    const hold = item.timerNode;
    if (hold !== null) this.deadlines.cancel(hold);
    this.leave(item);
    item.attempt++;
    item.deliveries++;
    item.leaseBoot = this.boot;
    const leaseExpiresAtMs = nowMs + (leaseMs ?? item.leaseMs);
    item.leaseExpiresAtMs = leaseExpiresAtMs;
    this.enter(item, "leased");
    this.deadlines.scheduleNode(item.idleTimer(), leaseExpiresAtMs, DeadlineKind.Lease);
    let bytes: { payload: Uint8Array; metadata: Uint8Array; enqueuedAtMs: number; trace?: string | null };
    if (set === null) {
      assert(item.delivery === "at_least_once", "engine: an at_most_once lease needs the dequeue's write set");
      const read = this.itemBytes.deliveryBytes(item);
      // A volatile writer keeps nothing for a restart: the lease would be written only for recovery to read (035).
      if (!this.writerVolatile) this.deferredLeases.add(item, read.stored, nowMs);
      bytes = read;
    } else {
      const value = this.itemBytes.patchedValue(item);
      if (value !== null) {
        set.putItemBytes(item.shard, item.key, value);
        bytes = this.itemBytes.valueBytes(item, value);
      } else {
        const record = this.itemBytes.recordOf(item);
        set.putItem(item.shard, item.key, record);
        bytes = record;
      }
    }
    return toDelivery(item, bytes.payload, bytes.metadata, bytes.enqueuedAtMs, bytes.trace ?? null, this.receipts);
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
   * is written twice into one set, which the commit coalesces. An item acked since keeps the state
   * it had ("leased"), but its lease deadline was cancelled, while a live leased item's is always
   * scheduled: that check spares the table lookup (two or three cache misses) for most of the list.
   */
  flushLeaseWrites(all: boolean): void {
    const { items, storedCopies } = all ? this.deferredLeases.takeAll() : this.deferredLeases.takeDue();
    if (items.length === 0) return;
    const set = this.ws();
    for (const [i, item] of items.entries()) {
      if (item.state === "leased" && item.timerNode !== null && this.table.holds(item)) this.itemBytes.writeItem(set, item, storedCopies[i] ?? null);
    }
  }

  leaseExpired(item: LiveItem, nowMs: number): void {
    if (item.ttlPassed || item.delivery === "at_most_once") this.endItem(item, "expired", nowMs);
    else if (item.attempt >= item.maxAttempts) this.killItem(item, "max_attempts");
    else this.release(item, item.deliverAtMs, nowMs);
  }

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
    this.itemBytes.writeItem(this.ws(), item);
  }

  /**
   * A delayed item or a dead letter becomes ready at once, its dead reason
   * dropped (beanstalkd's reserve-job of such a job); the lease that follows
   * writes it.
   */
  readyNow(item: LiveItem, nowMs: number): void {
    this.unplace(item);
    this.leave(item);
    if (item.extras !== null) item.extras.deadReason = null;
    this.enter(item, "ready");
    this.makeTakeable(item, nowMs);
  }

  /** A leased item's lease now ends at expiresAtMs (extend): its deadline moves and it is written. */
  extendLease(item: LiveItem, expiresAtMs: number): void {
    item.leaseExpiresAtMs = expiresAtMs;
    this.deadlines.reschedule(item.timerNode!, expiresAtMs);
    this.itemBytes.writeItem(this.ws(), item);
  }

  /**
   * A new item (`id` is its shard and key, formatted) enters memory, its
   * topic's signature group and idempotency keys, and takes its first place:
   * a dead letter (a dependency already failed: `deadReason`), or pending,
   * waiting on `unmet` when given; then its TTL deadline. Its record, which it
   * holds until stored, is the enqueue's write.
   */
  admit(shard: number, key: ItemKey, id: string, topic: Topic<LiveItem>, sig: number, record: ItemRecord & UnstoredBytes, unmet: readonly string[] | null, deadReason: string | null, nowMs: number): LiveItem {
    topic.joinGroup(sig);
    // Memory holds the payload and metadata only until the commit (stored() drops them).
    const item = new LiveItem(shard, key, topic, sig, record, this.settings.forRecord(record), "ready", record);
    if (record.group !== null) item.setGroup(topic.group(record.group));
    this.table.add(item);
    if (record.key !== null) topic.keys.set(topicKeyOf(record.group, record.key), item);
    if (deadReason !== null) {
      item.ensureExtras().deadReason = deadReason;
      this.enterDead(item);
    } else {
      if (unmet !== null) this.dependencies.addWaiting(id, unmet);
      this.placePending(item, nowMs);
    }
    if (record.ttlExpiresAtMs !== null) item.ensureExtras().ttlNode = this.deadlines.schedule(new Deadline(record.ttlExpiresAtMs, DeadlineKind.Ttl, item));
    return item;
  }

  /** A signature for a new item (a reference taken), or signatureRegistryFull. */
  internSignature(requires: Requires | null, preference: Preference | null = null): number {
    return this.signatures.intern(requires, preference);
  }

  /** Give back a signature reference taken by internSignature for an item never admitted. */
  releaseSignature(sig: number): void {
    this.signatures.release(sig);
  }

  /** The item's enqueue is durable: memory drops its bytes, and a ready item becomes takeable. */
  stored(item: LiveItem, nowMs: number): void {
    item.markStored();
    if (item.state === "ready" && !item.inReadyHeap) this.makeTakeable(item, nowMs);
  }

  /** An item whose enqueue never committed leaves memory as if never enqueued (nothing of it is stored). */
  discard(item: LiveItem): void {
    this.unplace(item);
    this.leave(item);
    this.forget(item);
  }

  /** From now on, the shard's deadlines that would write it wait (a shard held and not served). */
  parkShard(shard: number): void {
    if (!this.parked.has(shard)) this.parked.set(shard, []);
  }

  /** Whether the shard's writing deadlines wait (parkShard). */
  isParked(shard: number): boolean {
    return this.parked.has(shard);
  }

  /**
   * The shard serves (its deadlines that waited run at the next tick,
   * however late), or left the engine (`reschedule` false: they went with its
   * items and outcomes).
   */
  unparkShard(shard: number, reschedule: boolean): void {
    const waiting = this.parked.get(shard);
    if (waiting === undefined) return;
    this.parked.delete(shard);
    if (!reschedule) return;
    for (const node of waiting) {
      if (node.inHeap) continue;
      const target = node.value.target;
      // An item or outcome that left meanwhile (a drop) takes its deadline with it.
      if (node.value.kind === DeadlineKind.OutcomeRetention ? this.endedItems.outcomes.getByKey((target as RetainedOutcome).shard, (target as RetainedOutcome).key) !== target : !this.table.holds(target as LiveItem)) continue;
      this.deadlines.scheduleNode(node as HeapNode<EngineDeadline>, node.value.atMs, node.value.kind);
    }
  }

  /** A due deadline that would write a parked shard waits for it to serve (true), else false. */
  private parks(deadline: ItemStatesDeadline): boolean {
    let shard: number;
    let node: ParkedDeadline | null;
    switch (deadline.kind) {
      case DeadlineKind.Lease:
        shard = deadline.target.shard;
        node = deadline.target.progress;
        break;
      case DeadlineKind.Ttl:
        shard = deadline.target.shard;
        node = deadline.target.extras?.ttlNode ?? null;
        break;
      case DeadlineKind.OutcomeRetention:
        shard = deadline.target.shard;
        node = deadline.target.node;
        break;
      default:
        return false;
    }
    const waiting = this.parked.get(shard);
    if (waiting === undefined || node === null) return false;
    assert(node.value === deadline, "engine: a parked deadline is not its target's");
    waiting.push(node);
    return true;
  }

  /** Handle a due item or outcome deadline (waiter timeouts are the Engine's). */
  handleDeadline(deadline: ItemStatesDeadline, nowMs: number): void {
    if (this.parked.size > 0 && this.parks(deadline)) return;
    switch (deadline.kind) {
      case DeadlineKind.Due: {
        const item = deadline.target;
        if (item.state !== "delayed") assert(false, `engine: due deadline for a ${item.state} item`);
        this.leave(item);
        this.enter(item, "ready");
        // Ready since its deliverAtMs, however late this tick runs: a hold (prefer_wait_ms) counts from then.
        this.makeTakeable(item, Math.min(item.deliverAtMs, nowMs));
        return;
      }
      case DeadlineKind.PreferRelease:
        this.releaseHold(deadline.target);
        return;
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
        this.endedItems.handleDeadline(deadline, nowMs, this.openSet);
        return;
    }
  }

  private enter(item: LiveItem, state: LiveStateName): void {
    item.state = state;
    if (item.topic.countItem(item, state, 1)) this.boundReleased(item.topic);
  }

  private leave(item: LiveItem): void {
    if (item.topic.countItem(item, item.state, -1)) this.boundReleased(item.topic);
  }

  /** A bound (max_leased, rate, a group's pause) stopped holding back some of the topic's items: its parked dequeues are served at the op's end. */
  boundReleased(topic: Topic<LiveItem>): void {
    if (topic.takeable > 0) this.dirty.add(topic);
  }

  private enterDead(item: LiveItem): void {
    this.enter(item, "dead");
    item.topic.deadLetters.add(item);
    this.namespaceMap.get(item.ns)!.counters.dead++;
  }

  /** A pending item (in no index, counted nowhere) takes its place: waiting, delayed or ready. */
  private placePending(item: LiveItem, nowMs: number): void {
    // waitingCount first: most stores have no `after` edges, and an id string per item costs.
    if (this.dependencies.waitingCount > 0 && this.dependencies.isWaiting(item.id)) {
      this.enter(item, "waiting");
    } else if (item.deliverAtMs > nowMs) {
      this.enter(item, "delayed");
      this.deadlines.scheduleNode(item.idleTimer(), item.deliverAtMs, DeadlineKind.Due);
    } else {
      this.enter(item, "ready");
      this.makeTakeable(item, nowMs);
    }
  }

  private makeTakeable(item: LiveItem, nowMs: number): void {
    if (!item.committed) return;
    if (this.signatures.preferringCount > 0) this.hold(item, nowMs);
    item.topic.insertReady(item);
    this.dirty.add(item.topic);
  }

  /**
   * An item with `prefers` and a wait becomes ready: for its first
   * prefer_wait_ms only full-fit workers may take it, so it moves to its
   * preference's held variant (a signature of its own, which the Matcher
   * judges by full fit) until its release deadline (docs/decisions/030-preferences.md).
   */
  private hold(item: LiveItem, nowMs: number): void {
    const preference = this.signatures.preferenceOf(item.signatureId);
    if (preference === null || preference.preferWaitMs === 0) return;
    if (!preference.held) this.switchVariant(item, true);
    this.deadlines.scheduleNode(item.idleTimer(), nowMs + preference.preferWaitMs, DeadlineKind.PreferRelease);
  }

  /** The wait is over: the item moves to its plain signature, which every worker its requires allow may take. */
  private releaseHold(item: LiveItem): void {
    if (item.state !== "ready") assert(false, `engine: prefer release for a ${item.state} item`);
    const inHeap = item.inReadyHeap;
    if (inHeap) item.topic.removeReady(item);
    this.switchVariant(item, false);
    if (inHeap) {
      item.topic.insertReady(item);
      this.dirty.add(item.topic);
    }
  }

  /** The item (in no ready heap) takes a reference to its preference's other variant and gives back its own. */
  private switchVariant(item: LiveItem, held: boolean): void {
    const from = item.signatureId;
    const to = this.signatures.internVariant(from, held);
    item.topic.joinGroup(to);
    item.signatureId = to;
    item.topic.leaveGroup(from);
    this.signatures.release(from);
  }

  /** Take the item out of the index of its current state (its count stays until leave()). */
  private unplace(item: LiveItem): void {
    switch (item.state) {
      case "ready": {
        if (item.inReadyHeap) item.topic.removeReady(item);
        // A held item's release deadline (prefer_wait_ms).
        const timer = item.timerNode;
        if (timer !== null) this.deadlines.cancel(timer);
        return;
      }
      case "delayed":
      case "leased": {
        const timer = item.timerNode;
        if (timer !== null) this.deadlines.cancel(timer);
        return;
      }
      case "waiting":
        this.dependencies.remove(item.id);
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
      // Not in the heap while it waits for a parked shard.
      if (extras.ttlNode.inHeap) this.deadlines.cancel(extras.ttlNode);
      extras.ttlNode = null;
    }
    this.table.delete(item);
    const key = item.idempotencyKey;
    const group = item.group;
    if (key !== null) {
      const topicKey = topicKeyOf(group === null ? null : group.name, key);
      if (item.topic.keys.get(topicKey) === item) item.topic.keys.delete(topicKey);
    }
    if (group !== null && group.items === 0) {
      const rotation = item.topic.rotation as GroupRotation<LiveItem>;
      if (rotation.forgettable(group)) rotation.forget(group);
      else if (group.pause === null) rotation.linger(group);
    }
    item.topic.leaveGroup(item.signatureId);
    this.signatures.release(item.signatureId);
    this.namespaceMap.get(item.ns)!.dropIfEmpty(item.topic);
  }

  /**
   * The item ends: removed from memory and disk, its outcome (and an acked
   * item's `result`) kept for outcomeRetentionMs; dependents and parked
   * `wait`s learn of it.
   */
  endItem(item: LiveItem, outcome: Outcome, nowMs: number, result: Uint8Array | null = null): void {
    this.unplace(item);
    this.leave(item);
    this.forget(item);
    const ns = item.ns;
    this.endedItems.record(ns, item.shard, item.key, outcome, nowMs, this.ws(), result);
    this.namespaceMap.get(ns)!.counters[outcome]++;
    if (this.endListener !== null) this.endListener(item.key);
    // Most stores have no `after` edges: skip the graph's lookups by id then.
    if (this.dependencies.edgeCount === 0) return;
    const id = item.id;
    if (outcome === "acked") this.dependencyAcked(id, nowMs);
    else this.killDependents(id, outcome);
  }

  /** The item `id` was acked (here, or on another node's shard): each waiting item whose last dependency it was takes its place. */
  dependencyAcked(id: string, nowMs: number): void {
    for (const dependentId of this.dependencies.onAcked(id)) {
      const dependent = this.table.get(dependentId);
      if (dependent === undefined || dependent.state !== "waiting") continue;
      this.leave(dependent);
      this.placePending(dependent, nowMs);
    }
  }

  /** The item becomes a dead letter: kept and listed by `dead`, not delivered; its dependents die too. */
  killItem(item: LiveItem, reason: string, priority: number | null = null): void {
    this.makeDead(item, reason, priority);
    this.killDependents(item.id, "dead");
  }

  /** Every item waiting on `id`, directly or through others, dies: DependencyGraph.onFailed walks that closure with one work list, so one loop here and no recursion at any depth. */
  killDependents(id: string, how: "cancelled" | "expired" | "dead"): void {
    for (const killed of this.dependencies.onFailed(id, how)) {
      const dependent = this.table.get(killed.itemId);
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
    this.itemBytes.writeItem(this.ws(), item);
  }

  namespace(name: string, nowMs: number): Namespace {
    let ns = this.namespaceMap.get(name);
    if (ns === undefined) {
      ns = new Namespace(name, this.bucketFor(name, nowMs), this.namespaceMap);
      this.namespaceMap.set(name, ns);
    }
    return ns;
  }

  /** The open WriteSet of the op in progress (begun on first use). */
  ws(): WriteSet {
    if (this.set === null) this.set = this.writer.begin();
    return this.set;
  }

  /** ws() as a function EndedItems calls unbound. */
  private readonly openSet = (): WriteSet => this.ws();

  /** Run `hook` once the open set's commit settles (settle-hooks.ts). */
  afterCommit(hook: () => void): void {
    this.settleHooks.add(hook);
  }

  /** A topic's pause was lifted: its parked dequeues are served at the op's end, and it goes when empty. */
  pauseLifted(topic: Topic<LiveItem>): void {
    if (topic.takeable > 0) this.dirty.add(topic);
    this.namespaceMap.get(topic.ns)?.dropIfEmpty(topic);
  }

  /** Hand each topic that gained takeable items to `serve`, once, taking it off the list first (a topic made dirty meanwhile comes again). */
  serveDirtyTopics(serve: (topic: Topic<LiveItem>, nowMs: number) => void, nowMs: number): void {
    if (this.dirty.size === 0) return;
    for (const topic of this.dirty) {
      this.dirty.delete(topic);
      serve(topic, nowMs);
    }
  }

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
  private readonly background: CommitListener = { committed() {}, failed: () => void this.writeFailures++ };

  // ---- recovery's loader (recovery/recovery.ts): fills the indexes from the store, in steps ----

  /** A retained outcome (cancelled, expired, dead, or acked before the acked log) read from the store. */
  loadOutcome(shard: number, key: ItemKey, ns: string, outcome: Outcome, endedAtMs: number, result: Uint8Array | null = null): void {
    this.endedItems.restore(new RetainedOutcome(shard, key, ns, outcome, endedAtMs, result));
  }

  /** An acked item of the acked log, still within the retention. */
  loadAckedOutcome(ns: string, key: ItemKey, endedAtMs: number): void {
    this.endedItems.restoreAcked(ns, key, endedAtMs);
  }

  /** Acked log records that ended before `endedAtMs` are past the retention: purge them. */
  purgeAckedBefore(endedAtMs: number): void {
    this.ws().purgeAckedBefore(endedAtMs);
  }

  /**
   * A stored item enters memory, its topic's signature group and idempotency
   * keys, but no index of its state yet (placeLoadedItem files it once every
   * item is known). Until then its state says only whether the store holds a
   * dead letter (a dependency lookup reads that); "leased" is kept too.
   */
  loadItem(shard: number, key: ItemKey, record: ItemRecord, nowMs: number): LiveItem {
    let requires: Requires | null = null;
    if (record.requires !== null) {
      const r = parseRequires(record.requires, this.limits);
      assert(r.ok, `stored item ${shard}:${key} has invalid requires`);
      requires = r.value;
    }
    let preference: Preference | null = null;
    const prefers = record.prefers ?? null;
    if (prefers !== null) {
      const p = parsePrefers(prefers, this.limits);
      assert(p.ok, `stored item ${shard}:${key} has invalid prefers`);
      if (p.value !== null) preference = new Preference(p.value, record.preferWaitMs ?? 0, false);
    }
    const sig = this.signatures.intern(requires, preference);
    assert(sig !== signatureRegistryFull, "recovery: more stored signatures than signaturesMax");
    const topic = this.namespace(record.ns, nowMs).topic(record.topic);
    topic.joinGroup(sig);
    const state = record.state === "pending" ? "ready" : record.state;
    const item = new LiveItem(shard, key, topic, sig, record, this.settings.forRecord(record), state, null);
    if (record.group !== null) item.setGroup(topic.group(record.group));
    this.table.add(item);
    if (record.key !== null) topic.keys.set(topicKeyOf(record.group, record.key), item);
    return item;
  }

  /**
   * A loaded item takes its place: a stored dead letter its dead letters', a
   * leased item its lease deadline (a lease that ended while the server was
   * down expires at the first tick), any other pending, waiting on `unmet`
   * when given; then its TTL deadline.
   */
  placeLoadedItem(item: LiveItem, unmet: readonly string[] | null, nowMs: number): void {
    if (item.state === "dead") {
      this.enter(item, "dead");
      item.topic.deadLetters.add(item);
    } else if (item.state === "leased") {
      this.enter(item, "leased");
      this.deadlines.scheduleNode(item.idleTimer(), item.leaseExpiresAtMs ?? nowMs, DeadlineKind.Lease);
    } else {
      if (unmet !== null) this.dependencies.addWaiting(item.id, unmet);
      this.placePending(item, nowMs);
    }
    const ttlExpiresAtMs = item.ttlExpiresAtMs;
    if (ttlExpiresAtMs !== null) item.ensureExtras().ttlNode = this.deadlines.schedule(new Deadline(ttlExpiresAtMs, DeadlineKind.Ttl, item));
  }

  // ---- a shard moving away (cluster mode, recovery/shard-moves.ts): nothing is written, the new owner has it all ----

  /** A live item of a shard this engine stops serving leaves every index and count, as if never loaded. */
  unloadItem(item: LiveItem): void {
    this.unplace(item);
    this.leave(item);
    this.forget(item);
  }

  /** The shard's retained outcomes leave memory (ended-items.ts says what stays). */
  unloadOutcomes(shard: number): void {
    this.endedItems.dropShard(shard);
  }

  /** Recovery is done: its writes (kills, purges) go to a background commit, and no waiter needs serving yet. */
  endLoad(): void {
    this.endSetBackground();
    this.dirty.clear();
  }
}
