// dequeue and the parked dequeues (long-poll waiters): lease the best items a
// worker may take, park a request that found nothing, and serve parked
// requests first come, first served when their topics gain takeable items.
//
// When the reply may go out: a dequeue whose deliveries are all at_least_once
// replies at once, while its lease writes follow leaseWriteDelayMs later
// (ItemStates.lease; an ack or nack within that window replaces the lease
// write). A crash before that commit only makes the item deliverable again
// (at-least-once allows it), and the receipt names this boot, so the
// restarted server can never issue it again. A dequeue that delivers any
// at_most_once item waits until its leases are durable: delivering one whose
// lease a crash could forget would let it be delivered twice. If that commit
// fails the reply is not sent and every item in it is ready again. In cluster
// mode (awaitLeaseCommit) every dequeue waits so: a node that lost the shard
// meanwhile has its lease commit refused, so it never hands out an item the
// shard's new owner may deliver too. There, too, a topic's own max_leased and
// rate hold across the nodes: take() asks the shared gate
// (groups/shared-topic-gate.ts) for such a topic.

import { assert } from "../../lib/assert.ts";
import type { Commit, WriteSet, Writer } from "../../storage/writer.ts";
import type { Delivery, DequeueDone, DequeueInput, DequeueOutcome } from "../api.ts";
import { Deadline, DeadlineKind } from "../time/deadlines.ts";
import { atWait } from "../failures/failure-location.ts";
import { fail } from "../failures/failures.ts";
import type { EngineDeadlines } from "../time/engine-deadlines.ts";
import type { ItemStates } from "../state/item-states.ts";
import { type Capabilities, CapabilitiesParser, Matcher } from "../matching/index.ts";
import type { Namespace } from "../state/namespace.ts";
import type { DeliveryPrefetch } from "../ready/delivery-prefetch.ts";
import type { ReadAheadReader } from "../ready/read-ahead.ts";
import type { LiveItem } from "../state/item.ts";
import type { Topic } from "../ready/topic.ts";
import { AskTracker } from "../matching/unmatchable.ts";
import { FitCounts } from "../matching/fit-counts.ts";
import { Bounds } from "../groups/bounds.ts";
import { Waiter, WaiterRegistry } from "./waiters.ts";
import { DequeueShardFilter, noShardWritable } from "../admission/writable-shards.ts";
import { gateClosed, type SharedTopicGate } from "../groups/shared-topic-gate.ts";

/** Retry hint when every parked slot is taken (1 s): long-polls free slots as they time out or get items. */
const waitersFullRetryAfterMs = 1000;

export class Dequeuer {
  readonly waiters = new WaiterRegistry();
  readonly matcher: Matcher;
  /** Which worker kinds asked which topic lately, for the unmatchable-items report in stats. */
  readonly asks = new AskTracker();
  /** Which shards' items may be leased now (admission/writable-shards.ts): a dequeue skips the heaps of shards that take no writes. */
  private readonly writableShards: DequeueShardFilter;
  /** A worker's repeated capabilities are parsed once (parse-capabilities.ts). */
  private readonly capabilities: CapabilitiesParser;
  /** The topic and capabilities of the last dequeue that delivered: what readAheadNext guesses from. */
  private lastTopic: Topic<LiveItem> | null = null;
  private lastCapabilities: Capabilities | null = null;
  /** Cluster mode: topics' own max_leased and rate shared with the other nodes (groups/shared-topic-gate.ts); null on a single node. */
  sharedGate: SharedTopicGate | null = null;

  constructor(
    private readonly states: ItemStates,
    private readonly writer: Writer,
    /** The engine's deadline heap: a parked dequeue's timeout goes in here. */
    private readonly deadlines: EngineDeadlines,
    /** The latest nowMs the engine has seen, for work done when a commit lands (outside any op). */
    private readonly latestNowMs: () => number,
    /** Every delivery waits for its lease commit, as at_most_once ones do (cluster mode). */
    private readonly awaitLeaseCommit = false,
    /** Reads the next deliveries' items in off the main thread (ready/delivery-prefetch.ts); null where the store has no such read. */
    private readonly prefetch: DeliveryPrefetch<LiveItem> | null = null,
    /** Rate buckets and the groups' rotation, told of each delivery (groups/bounds.ts). */
    readonly bounds: Bounds = new Bounds(deadlines, (topic) => states.boundReleased(topic)),
  ) {
    this.matcher = new Matcher(states.registry);
    this.capabilities = new CapabilitiesParser(states.limits);
    this.writableShards = new DequeueShardFilter(writer, writer.shardCount);
  }

  /** Keys the delivery prefetch asked the store for, since start (0 without one). */
  get prefetchKeysTotal(): number {
    return this.prefetch?.keysRequested ?? 0;
  }

  /** Run by Engine.dequeue once due deadlines are handled. */
  dequeue(nsName: string, input: DequeueInput, nowMs: number): DequeueOutcome {
    let caps: Capabilities | null = null;
    if (input.capabilities !== null) {
      const r = this.capabilities.parse(input.capabilities);
      if (!r.ok) return fail(r.kind, r.message, { at: { kind: "capabilities", at: r.at } });
      caps = r.value;
    }
    // A dequeue without capabilities is a kind of its own (key ""): it may take only signature 0.
    const kind = this.matcher.workerKind(caps);
    this.asks.noteAsks(this.states.namespaces.get(nsName), input.topics, kind, caps, nowMs);
    const done = this.take(this.states.namespaces.get(nsName), input.topics, kind, caps, input.leaseMs, nowMs);
    if (done.deliveries.length > 0 || input.waitMs <= 0) return done;

    const limits = this.states.limits;
    if (this.waiters.ownerCount(input.owner) >= limits.waitersPerConnectionMax) {
      return fail("over_limit", `this connection already has ${limits.waitersPerConnectionMax} parked dequeues (waiters_per_connection_max)`, { at: atWait });
    }
    if (this.waiters.total >= limits.waitersTotalMax) {
      return fail("server_full", `the server already holds ${limits.waitersTotalMax} parked dequeues (waiters_total_max)`, { retryAfterMs: waitersFullRetryAfterMs });
    }
    return { ok: true, kind: "parked", waiter: this.park(nsName, input, caps, nowMs) };
  }

  // park() and leasesCommit() hold this file's closures: a function that
  // makes a closure allocates the scope it captures on every call, even on
  // the paths that make none, so dequeue() and take() stay closure-free.

  /** A dequeue that found nothing waits, up to wait_ms, for items. */
  private park(nsName: string, input: DequeueInput, caps: Capabilities | null, nowMs: number): Promise<DequeueDone> {
    // The executor runs synchronously, so `resolve` is set before the Waiter is built.
    let resolve: (done: DequeueDone) => void = () => assert(false, "engine: waiter resolved before its promise existed");
    const promise = new Promise<DequeueDone>((r) => {
      resolve = r;
    });
    // A copy: the caller may reuse its input and topics list for its next dequeue (api.ts, DequeueInput).
    const topics = input.topics.map(({ topic, count }) => ({ topic, count }));
    const waiter = new Waiter(input.owner, nsName, topics, caps, input.leaseMs, resolve);
    waiter.timeoutNode = this.deadlines.schedule(new Deadline(nowMs + input.waitMs, DeadlineKind.WaiterTimeout, waiter));
    this.waiters.add(waiter);
    return promise;
  }

  /**
   * The commit of leases written now; if it fails, the items are ready again
   * (revertLeases) and the reply fails. The revert rides the commit's promise
   * (its reaction runs in the turn the commit settles, before a request sent
   * after the failed reply can be read); the one listener stays the reply's
   * (storage/writer.ts).
   */
  private leasesCommit(set: WriteSet, deliveries: Delivery[]): Commit {
    const commit = set.close();
    commit.promise().catch(() => this.revertLeases(deliveries));
    return commit;
  }

  cancelWaiters(owner: number): void {
    for (const waiter of this.waiters.ofOwner(owner)) this.settleWaiter(waiter, answered([], null));
  }

  releaseWaiters(): void {
    for (const waiter of this.waiters.all()) this.settleWaiter(waiter, answered([], null));
  }

  /** A parked dequeue's wait_ms passed: it answers empty. */
  timeOut(waiter: Waiter): void {
    waiter.timeoutNode = null;
    this.settleWaiter(waiter, answered([], null));
  }

  /** Cluster mode: a shard began serving; the cached mask of writable shards (one per millisecond) is stale. */
  shardsChanged(): void {
    this.writableShards.forget();
  }

  /** Serve the parked dequeues of topics that gained takeable items, first come first served. */
  wake(nowMs: number): void {
    this.states.serveDirtyTopics(this.serveTopic, nowMs);
  }

  /** Serve one dirty topic's parked dequeues (wake; made once, so a wake allocates no closure). */
  private readonly serveTopic = (topic: Topic<LiveItem>, nowMs: number): void => {
    // A paused topic's new items wake nobody; resume marks it dirty again (pause.ts), as the end of a bound does (groups/bounds.ts).
    if (topic.takeable === 0 || topic.pause !== null || topic.held !== 0) return;
    const queue = this.waiters.forTopic(topic.ns, topic.name);
    if (queue === undefined) return;
    for (const waiter of queue) {
      if (topic.takeable === 0) break;
      const kind = this.matcher.workerKind(waiter.capabilities);
      const done = this.take(this.states.namespaces.get(waiter.ns), waiter.topics, kind, waiter.capabilities, waiter.leaseMs, nowMs);
      if (done.deliveries.length > 0) this.settleWaiter(waiter, done);
    }
  };

  /**
   * Lease up to `count` best items per listed topic. The reply carries no
   * durable promise when every delivery is at_least_once, and the lease
   * commit's promise when any is at_most_once (see the file header).
   */
  private take(
    ns: Namespace | undefined,
    topics: ReadonlyArray<{ topic: string; count: number }>,
    kind: number,
    caps: Capabilities | null,
    leaseMs: number | null,
    nowMs: number,
  ): DequeueDone {
    const deliveries: Delivery[] = [];
    if (ns === undefined) return answered(deliveries, null);
    const shardOk = this.writableShards.dequeueFilter(nowMs);
    if (shardOk === noShardWritable) return answered(deliveries, null);
    /** Begun by the first lease written now: those leases must be durable before the reply. */
    let set: WriteSet | null = null;
    for (let t = 0; t < topics.length; t++) {
      const want = topics[t] as { topic: string; count: number };
      const topic = ns.topics.get(want.topic);
      // A paused topic delivers nothing (pause.ts), nor one its own bounds hold back (groups/bounds.ts).
      if (topic === undefined || topic.takeable === 0) continue;
      if (topic.pause !== null) {
        this.bounds.passedOver.topic_paused++;
        continue;
      }
      const bounded = topic.policies !== null || topic.rotation !== null;
      if (bounded && !this.bounds.topicOpen(topic, nowMs)) continue;
      // Skip a topic where this kind may take nothing: the walk would visit every entry.
      if (topic.eligibleGroupCount(this.matcher, kind) === 0) continue;
      // Cluster mode: a topic bound by its own max_leased or rate needs the node's tokens and, per shard, a free slot.
      const gate = bounded && this.sharedGate !== null && this.sharedGate.binds(topic) ? this.sharedGate : null;
      const pickOk = gate === null ? shardOk : gate.open(topic, shardOk, want.count, nowMs);
      if (pickOk === gateClosed) continue;
      const deliveredBefore = deliveries.length;
      for (let n = 0; n < want.count; n++) {
        // The topic's max_leased or rate may have been reached by this dequeue's own deliveries.
        if (bounded && topic.held !== 0) break;
        const item = topic.pickBest(this.matcher, kind, pickOk);
        if (item === null) {
          // Held back by the slots of some shard? The gate draws there.
          gate?.short(topic, this.matcher, kind, shardOk, want.count - n, nowMs);
          break;
        }
        if (bounded && !this.bounds.groupAdmits(topic, item, nowMs)) {
          n--;
          continue;
        }
        // At_most_once leases, and every lease in cluster mode, are written now and the reply waits for them.
        const writeNow = this.awaitLeaseCommit || item.delivery === "at_most_once";
        if (writeNow) set ??= this.writer.begin();
        this.prefetch?.delivered(topic.readyHeapOf(item), item.shard);
        if (this.matcher.hasPreferences()) this.countFit(topic, item, kind);
        deliveries.push(this.states.lease(item, leaseMs, nowMs, writeNow ? set : null));
        if (bounded) this.bounds.delivered(topic, item, nowMs);
        ns.counters.delivered++;
        if (gate !== null && !gate.delivered(topic, item, want.count - n - 1, nowMs)) break;
      }
      if (deliveries.length > deliveredBefore) {
        this.lastTopic = topic;
        this.lastCapabilities = caps;
      }
    }
    this.prefetch?.flush();
    // Only at_least_once deliveries: sent at once, their leases written later
    // (ItemStates.lease). If that write fails the deliveries are out already,
    // so memory keeps the leases (their receipts stay good in this boot) and
    // the disk catches up at the items' next write; after a crash the items
    // are delivered again under receipts of the new boot.
    return answered(deliveries, set === null ? null : this.leasesCommit(set, deliveries));
  }

  /** A delivery of an item with `prefers`: counted by fit, for the topic and the engine (matching/fit-counts.ts). */
  private countFit(topic: Topic<LiveItem>, item: LiveItem, kind: number): void {
    const preference = this.states.registry.preferenceOf(item.signatureId);
    if (preference === null) return;
    const full = this.matcher.fitOf(kind, item.signatureId) === preference.prefers.totalWeight;
    const waited = preference.preferWaitMs > 0;
    (topic.fitCounts ??= new FitCounts()).count(full, waited);
    this.fitTotals.count(full, waited);
  }

  /** Deliveries of items with `prefers` since start, by fit. */
  readonly fitTotals = new FitCounts();

  /**
   * The writer went idle (ready/read-ahead.ts): read the stored value of the item
   * the last delivering dequeue would take next, so that its delivery finds
   * it in hand. A guess: a different worker or topic next only wastes the read.
   */
  readAheadNext(reader: ReadAheadReader): void {
    const topic = this.lastTopic;
    if (topic === null || topic.takeable === 0 || topic.pause !== null) return;
    // Kind ids do not outlive the matcher's cache entry: ask again, as parked dequeues do.
    const item = topic.pickBest(this.matcher, this.matcher.workerKind(this.lastCapabilities), null);
    if (item === null || item.unstored !== null) return;
    reader.readAhead(item.shard, item.key);
  }

  /** A dequeue's leases could not be made durable, so its deliveries were never sent: the items are ready again. */
  private revertLeases(deliveries: Delivery[]): void {
    assert(!this.states.setOpen, "engine: revert inside an op");
    for (const delivery of deliveries) {
      const item = this.states.items.get(delivery.id);
      if (item === undefined || item.state !== "leased") continue;
      if (this.states.receiptOf(item) !== delivery.receipt) continue;
      item.attempt--;
      this.states.release(item, item.deliverAtMs, this.latestNowMs());
    }
    this.states.endSetBackground();
    this.wake(this.latestNowMs());
  }

  private settleWaiter(waiter: Waiter, done: DequeueDone): void {
    if (waiter.settled) return;
    waiter.settled = true;
    this.waiters.remove(waiter);
    if (waiter.timeoutNode !== null) {
      this.deadlines.cancel(waiter.timeoutNode);
      waiter.timeoutNode = null;
    }
    waiter.resolve(done);
  }
}

function answered(deliveries: Delivery[], commit: Commit | null): DequeueDone {
  return new Answered(deliveries, commit);
}

/** A dequeue's answer: `durable`, the lease commit's promise, is made only when read (the dispatcher listens on `commit`). */
class Answered implements DequeueDone {
  readonly ok = true;
  readonly kind = "done";
  constructor(
    readonly deliveries: Delivery[],
    readonly commit: Commit | null,
  ) {}

  get durable(): Promise<void> | null {
    return this.commit === null ? null : this.commit.promise();
  }
}
