// The queue engine: every op of the contract but the wire, over in-memory
// indexes rebuilt from the store at start. Synchronous: time arrives as nowMs;
// each change goes through the Writer in one WriteSet per op, and replies that
// must wait for disk carry the WriteSet's promise (Reply.durable).
//
// This file holds the ops, dequeue and the parked waiters. Where things live:
// items, outcomes and every state transition (item-states.ts); per namespace
// its topics (namespace.ts); per topic the ready heaps per signature group and
// shard, dead letters and idempotency keys (topic.ts); the deadline heap
// (deadlines.ts); parked dequeues (waiters.ts); `after` edges
// (dependencies.ts); matching verdicts (matching/); start-up (recovery.ts).
// docs/SEMANTICS.md lists the choices made where the contract is silent.

import { assert } from "../lib/assert.ts";
import type { HeapNode } from "../lib/pairing-heap.ts";
import { itemDefaults, type Limits } from "../limits.ts";
import type { ItemRecord } from "../storage/record.ts";
import type { Store } from "../storage/store.ts";
import type { WriteSet, Writer } from "../storage/writer.ts";
import type {
  Delivery,
  DequeueInput,
  DequeueOutcome,
  EndedItemState,
  EngineApi,
  EnqueueItemInput,
  Failure,
  FailureCode,
  ItemState,
  LiveStateName,
  Reply,
  Result,
  TopicCounts,
} from "./api.ts";
import { type Deadline, DeadlineKind } from "./deadlines.ts";
import { type AfterClassification, classifyAfter } from "./dependencies.ts";
import { formatId, formatReceipt, parseReceipt } from "./ids.ts";
import { checkEngineInvariants } from "./invariants.ts";
import { LiveItem, snapshot } from "./item.ts";
import { ItemStates } from "./item-states.ts";
import { type Capabilities, Matcher, parseCapabilities, parseRequires, type Requires, signatureRegistryFull } from "./matching/index.ts";
import type { Namespace } from "./namespace.ts";
import { loadStore } from "./recovery.ts";
import { buildStats } from "./stats.ts";
import type { SignatureGroup, Topic } from "./topic.ts";
import { toDelivery, toItemState } from "./views.ts";
import { Waiter, WaiterRegistry, type WaiterReply } from "./waiters.ts";

/** Dead letters one `redrive` without ids moves (10,000): keeps one reply's WriteSet small; call again for the rest. */
export const redriveAllMax = 10_000;
/** Retry hint when every parked slot is taken (1 s): long-polls free slots as they time out or get items. */
const waitersFullRetryAfterMs = 1000;
/** Worker "kind" of a dequeue without capabilities: it matches only items without requires. */
const noCapabilitiesKind = -1;

export interface EngineOptions {
  store: Store;
  writer: Writer;
  limits: Limits;
  namespaces: Record<string, { enqueuePerMinute: number | null }>;
  nowMs: number;
}

function fail(code: FailureCode, message: string, extra: Omit<Failure, "code" | "message"> = {}): { ok: false; failure: Failure } {
  return { ok: false, failure: { code, message, ...extra } };
}

function unavailable(retryAfterMs: number, message: string): { ok: false; failure: Failure } {
  return fail("UNAVAILABLE", message, { retryAfterMs });
}

export class Engine implements EngineApi {
  private readonly waiters = new WaiterRegistry();
  private readonly matcher: Matcher;
  /** Per shard: 1 when it takes writes now (refreshed once per ms), so a dequeue skips unhealthy shards' heaps. */
  private readonly shardOk: Uint8Array;
  private shardOkAtMs = Number.NaN;
  private allShardsOk = true;
  private nextShard = 0;
  private readonly scratchSeen = new Set<unknown>();
  private lastNowMs: number;
  private enqueueRollbacks = 0;

  private readonly s: ItemStates;
  private readonly writer: Writer;
  private readonly limits: Limits;

  private constructor(writer: Writer, limits: Limits, quotas: Record<string, { enqueuePerMinute: number | null }>, nowMs: number) {
    this.s = new ItemStates(writer, limits, quotas);
    this.writer = writer;
    this.limits = limits;
    this.matcher = new Matcher(this.s.registry);
    this.shardOk = new Uint8Array(writer.shardCount);
    this.lastNowMs = nowMs;
  }

  /** Build the engine from what the store holds (an empty store is a fresh start). */
  static recover(options: EngineOptions): Engine {
    assert(options.store.shardCount === options.writer.shardCount, "engine: store and writer disagree on shards");
    const engine = new Engine(options.writer, options.limits, options.namespaces, options.nowMs);
    loadStore(engine.s, options.store, options.nowMs);
    return engine;
  }

  /** Called when a new deadline becomes the earliest outside a direct call (e.g. a lease granted to a parked dequeue). */
  set onEarlierDeadline(listener: (() => void) | null) {
    this.s.deadlines.onEarlier = listener;
  }

  // ---- enqueue ----

  enqueue(nsName: string, inputs: EnqueueItemInput[], nowMs: number): Result<Reply<{ ids: string[] }>> {
    this.advance(nowMs);
    const count = inputs.length;
    const requires: Array<Requires | null> = [];
    const after: AfterClassification[] = [];
    const lookup = (id: string) => this.s.dependencyStatus(nsName, id);
    for (let i = 0; i < count; i++) {
      const input = inputs[i] as EnqueueItemInput;
      let parsed: Requires | null = null;
      if (input.requires !== null) {
        const r = parseRequires(input.requires, `items[${i}].requires`, this.limits);
        if (!r.ok) return fail(r.code, r.message, { field: r.field, index: i });
        parsed = r.value;
      }
      requires.push(parsed);
      const c = classifyAfter(input.after, lookup, this.limits.afterIdsMax);
      if (c.kind === "not_found") {
        const id = (input.after as string[])[c.index];
        return fail("NOT_FOUND", `after id ${JSON.stringify(id)} is not known in this namespace`, { field: `items[${i}].after[${c.index}]`, index: i });
      }
      if (c.kind === "too_large") {
        return fail("TOO_LARGE", `after lists more than ${this.limits.afterIdsMax} ids`, { field: `items[${i}].after`, index: i });
      }
      after.push(c);
    }

    // Idempotency: a key held by a live item (or an earlier item of this batch) returns that item's id.
    const existingNs = this.s.namespaces.get(nsName);
    const ids: string[] = new Array<string>(count);
    const sameAs: number[] = new Array<number>(count).fill(-1);
    const waitOn: Promise<void>[] = [];
    let batchKeys: Map<string, Map<string, number>> | null = null;
    let fresh = 0;
    for (let i = 0; i < count; i++) {
      const input = inputs[i] as EnqueueItemInput;
      if (input.key !== null) {
        const existing = existingNs?.topics.get(input.topic)?.keys.get(input.key);
        if (existing !== undefined) {
          ids[i] = existing.id;
          if (existing.commit !== null) waitOn.push(existing.commit);
          continue;
        }
        batchKeys ??= new Map();
        let byKey = batchKeys.get(input.topic);
        if (byKey === undefined) {
          byKey = new Map();
          batchKeys.set(input.topic, byKey);
        }
        const first = byKey.get(input.key);
        if (first !== undefined) {
          sameAs[i] = first;
          continue;
        }
        byKey.set(input.key, i);
      }
      fresh++;
    }

    const signatures: number[] = new Array<number>(count).fill(0);
    for (let i = 0; i < count; i++) {
      if (sameAs[i] !== -1 || ids[i] !== undefined) continue;
      const sig = this.s.registry.intern(requires[i] ?? null);
      if (sig === signatureRegistryFull) {
        this.releaseSignatures(signatures);
        return fail("UNAVAILABLE", "too many distinct requires signatures are live", { field: `items[${i}].requires`, index: i, retryAfterMs: waitersFullRetryAfterMs });
      }
      signatures[i] = sig;
    }

    let shard = -1;
    if (fresh > 0) {
      const chosen = this.chooseShard(nowMs);
      if (chosen.shard < 0) {
        this.releaseSignatures(signatures);
        return unavailable(chosen.retryAfterMs, "no storage shard is accepting writes");
      }
      shard = chosen.shard;
    }
    const ns = this.s.namespace(nsName, nowMs);
    if (fresh > 0 && ns.bucket !== null) {
      const verdict = ns.bucket.take(fresh, nowMs);
      if (!verdict.ok) {
        this.releaseSignatures(signatures);
        if (verdict.tooLarge) {
          return fail("TOO_LARGE", `batch of ${fresh} new items exceeds the namespace quota of ${ns.bucket.perMinute} items per minute`, { field: "items" });
        }
        return fail("RATE_LIMITED", `namespace ${JSON.stringify(nsName)} is over its enqueue quota`, { retryAfterMs: verdict.retryAfterMs });
      }
    }
    const set = this.s.ws();
    const created: LiveItem[] = [];
    for (let i = 0; i < count; i++) {
      if (sameAs[i] !== -1 || ids[i] !== undefined) continue;
      const input = inputs[i] as EnqueueItemInput;
      const key = this.writer.nextKey();
      const id = formatId(shard, key);
      const record: ItemRecord = {
        ns: nsName,
        topic: input.topic,
        priority: input.priority,
        payload: input.payload,
        metadata: input.metadata,
        enqueuedAtMs: nowMs,
        deliverAtMs: input.deliverAtMs ?? nowMs + (input.delayMs ?? 0),
        leaseMs: input.leaseMs ?? itemDefaults.leaseMs,
        ttlExpiresAtMs: input.ttlMs === null ? null : nowMs + input.ttlMs,
        delivery: input.delivery,
        maxAttempts: input.maxAttempts,
        attempt: 0,
        deliveries: 0,
        state: "pending",
        leaseExpiresAtMs: null,
        deadReason: null,
        requires: input.requires,
        after: input.after,
        key: input.key,
      };
      const topic = ns.topic(input.topic);
      const sig = signatures[i] as number;
      topic.joinGroup(sig);
      const item = new LiveItem(id, shard, key, record, topic, sig, "ready", false);
      this.s.items.set(id, item);
      if (input.key !== null) topic.keys.set(input.key, item);
      const c = after[i] as AfterClassification;
      if (c.kind === "dead") {
        record.state = "dead";
        record.deadReason = c.deadReason;
        this.s.enterDead(item);
      } else {
        if (c.kind === "waiting") this.s.graph.addWaiting(id, c.unmet);
        this.s.placePending(item, nowMs);
      }
      if (record.ttlExpiresAtMs !== null) item.ttlNode = this.s.deadlines.schedule(record.ttlExpiresAtMs, DeadlineKind.Ttl, item, null, null);
      set.putItem(shard, key, snapshot(record));
      ns.counters.enqueued++;
      created.push(item);
      ids[i] = id;
    }
    for (let i = 0; i < count; i++) if (sameAs[i] !== -1) ids[i] = ids[sameAs[i] as number] as string;

    const end = this.s.endSet() as Promise<void>;
    if (created.length > 0) {
      for (const item of created) item.commit = end;
      end.then(
        () => this.activate(created),
        () => this.rollback(created),
      );
    }
    const durable = waitOn.length === 0 ? end : Promise.all([end, ...waitOn]).then(() => undefined);
    this.flushWakeups(nowMs);
    return { ok: true, value: { value: { ids }, durable } };
  }

  /** Give back the signature references a refused enqueue took (0 entries are no-ops). */
  private releaseSignatures(signatures: number[]): void {
    for (const sig of signatures) this.s.registry.release(sig);
  }

  /** The enqueue's commit is durable: its ready items become takeable. */
  private activate(created: LiveItem[]): void {
    for (const item of created) {
      if (this.s.items.get(item.id) !== item) continue;
      item.committed = true;
      item.commit = null;
      if (item.state === "ready" && item.readyNode === null) this.s.makeTakeable(item);
    }
    this.flushWakeups(this.lastNowMs);
  }

  /** The enqueue's commit failed: its items leave memory as if never enqueued (they were never takeable). */
  private rollback(created: LiveItem[]): void {
    assert(this.s.set === null, "engine: rollback inside an op");
    this.enqueueRollbacks++;
    for (const item of created) {
      if (this.s.items.get(item.id) !== item) continue;
      this.s.unplace(item);
      this.s.leave(item);
      this.s.forget(item);
      // Items enqueued meanwhile with this id in `after` cannot wait for it any more.
      for (const killed of this.s.graph.onFailed(item.id, "cancelled")) {
        const dependent = this.s.items.get(killed.itemId);
        if (dependent !== undefined) this.s.killItem(dependent, killed.deadReason);
      }
    }
    this.s.endSetBackground();
  }

  dequeue(nsName: string, input: DequeueInput, nowMs: number): Result<DequeueOutcome> {
    this.advance(nowMs);
    let caps: Capabilities | null = null;
    if (input.capabilities !== null) {
      const r = parseCapabilities(input.capabilities, "capabilities", this.limits);
      if (!r.ok) return fail(r.code, r.message, { field: r.field });
      caps = r.value;
    }
    const kind = caps === null ? noCapabilitiesKind : this.matcher.workerKind(caps);
    const reply = this.take(this.s.namespaces.get(nsName), input.topics, kind, input.leaseMs, nowMs);
    if (reply.value.deliveries.length > 0 || input.waitMs <= 0) return { ok: true, value: { kind: "done", reply } };

    if (this.waiters.ownerCount(input.owner) >= this.limits.waitersPerConnectionMax) {
      return fail("TOO_LARGE", `this connection already has ${this.limits.waitersPerConnectionMax} parked dequeues (waiters_per_connection_max)`, {
        field: "wait_ms",
      });
    }
    if (this.waiters.total >= this.limits.waitersTotalMax) {
      return unavailable(waitersFullRetryAfterMs, `the server already holds ${this.limits.waitersTotalMax} parked dequeues (waiters_total_max)`);
    }
    let resolve: ((reply: WaiterReply) => void) | null = null;
    const promise = new Promise<WaiterReply>((r) => {
      resolve = r;
    });
    const waiter = new Waiter(input.owner, nsName, input.topics, caps, input.leaseMs, resolve as unknown as (reply: WaiterReply) => void);
    waiter.timeoutNode = this.s.deadlines.schedule(nowMs + input.waitMs, DeadlineKind.WaiterTimeout, null, waiter, null);
    this.waiters.add(waiter);
    return { ok: true, value: { kind: "parked", waiter: promise } };
  }

  cancelWaiters(owner: number): void {
    for (const waiter of this.waiters.ofOwner(owner)) this.settleWaiter(waiter, { value: { deliveries: [] }, durable: null });
  }

  releaseWaiters(): void {
    for (const waiter of this.waiters.all()) this.settleWaiter(waiter, { value: { deliveries: [] }, durable: null });
  }

  /**
   * Lease up to `count` best items per listed topic. The reply waits until
   * the leases are durable, in both delivery modes: a receipt must never be
   * sent for a delivery a crash could forget, or the restarted server would
   * hand the same receipt to the next delivery of that item (its stored
   * delivery count would be behind). If the commit fails, the items go back
   * to ready: their deliveries were never sent.
   */
  private take(
    ns: Namespace | undefined,
    topics: ReadonlyArray<{ topic: string; count: number }>,
    kind: number,
    leaseMs: number | null,
    nowMs: number,
  ): Reply<{ deliveries: Delivery[] }> {
    const deliveries: Delivery[] = [];
    if (ns === undefined) return { value: { deliveries }, durable: null };
    this.refreshShardHealth(nowMs);
    let set: WriteSet | null = null;
    for (let t = 0; t < topics.length; t++) {
      const want = topics[t] as { topic: string; count: number };
      const topic = ns.topics.get(want.topic);
      if (topic === undefined || topic.takeable === 0) continue;
      const groups = this.eligibleGroups(topic, kind);
      for (let n = 0; n < want.count; n++) {
        const item = topic.pickBest(groups, this.allShardsOk, this.shardOk);
        if (item === null) break;
        set ??= this.writer.begin();
        this.s.lease(item, leaseMs, nowMs, set);
        deliveries.push(toDelivery(item));
        ns.counters.delivered++;
      }
    }
    if (set === null) return { value: { deliveries }, durable: null };
    const end = set.end();
    const durable = end.catch((error: unknown) => {
      this.revertLeases(deliveries);
      throw error;
    });
    return { value: { deliveries }, durable };
  }

  /** A dequeue's leases could not be made durable, so its deliveries were never sent: the items are ready again. */
  private revertLeases(deliveries: Delivery[]): void {
    assert(this.s.set === null, "engine: revert inside an op");
    for (const delivery of deliveries) {
      const item = this.s.items.get(delivery.id);
      if (item === undefined || item.state !== "leased" || formatReceipt(item.id, item.record.deliveries) !== delivery.receipt) continue;
      const record = item.record;
      this.s.unplace(item);
      this.s.leave(item);
      record.attempt--;
      record.state = "pending";
      record.leaseExpiresAtMs = null;
      this.s.placePending(item, this.lastNowMs);
      this.s.ws().putItem(item.shard, item.key, snapshot(record));
    }
    this.s.endSetBackground();
    this.flushWakeups(this.lastNowMs);
  }

  private eligibleGroups(topic: Topic, kind: number): SignatureGroup[] {
    const cached = topic.cachedEligible(kind);
    if (cached !== undefined) return cached;
    const list: SignatureGroup[] = [];
    for (const group of topic.groups.values()) {
      const ok = kind === noCapabilitiesKind ? group.signatureId === 0 : this.matcher.isEligible(kind, group.signatureId);
      if (ok) list.push(group);
    }
    topic.cacheEligible(kind, list);
    return list;
  }

  /** Serve the parked dequeues of topics that gained takeable items, first come first served. */
  private flushWakeups(nowMs: number): void {
    if (this.s.dirty.size === 0) return;
    for (const topic of this.s.dirty) {
      this.s.dirty.delete(topic);
      if (topic.takeable === 0) continue;
      const queue = this.waiters.forTopic(topic.ns, topic.name);
      if (queue === undefined) continue;
      for (const waiter of queue) {
        if (topic.takeable === 0) break;
        const kind = waiter.capabilities === null ? noCapabilitiesKind : this.matcher.workerKind(waiter.capabilities);
        const reply = this.take(this.s.namespaces.get(waiter.ns), waiter.topics, kind, waiter.leaseMs, nowMs);
        if (reply.value.deliveries.length > 0) this.settleWaiter(waiter, reply);
      }
    }
  }

  private settleWaiter(waiter: Waiter, reply: WaiterReply): void {
    if (waiter.settled) return;
    waiter.settled = true;
    this.waiters.remove(waiter);
    if (waiter.timeoutNode !== null) {
      this.s.deadlines.cancel(waiter.timeoutNode);
      waiter.timeoutNode = null;
    }
    waiter.resolve(reply);
  }

  // ---- ack, nack, extend ----

  ack(nsName: string, receipts: string[], nowMs: number): Result<Reply<{ acked: number; stale: string[] }>> {
    this.advance(nowMs);
    const stale: string[] = [];
    const found = this.leasedByReceipts(nsName, receipts, stale);
    const refused = this.checkShards(found, nowMs);
    if (refused !== null) return refused;
    this.s.ws();
    for (const item of found) this.s.endItem(item, "acked", nowMs);
    return this.finish({ acked: found.length, stale }, nowMs);
  }

  nack(
    nsName: string,
    entries: Array<{ receipt: string; delayMs: number | null; metadata: Uint8Array | null }>,
    nowMs: number,
  ): Result<Reply<{ nacked: number; stale: string[] }>> {
    this.advance(nowMs);
    const stale: string[] = [];
    const found: LiveItem[] = [];
    const chosen: number[] = [];
    this.scratchSeen.clear();
    for (let i = 0; i < entries.length; i++) {
      const receipt = (entries[i] as { receipt: string }).receipt;
      const item = this.leasedByReceipt(nsName, receipt);
      if (item === null || this.scratchSeen.has(item)) stale.push(receipt);
      else {
        this.scratchSeen.add(item);
        found.push(item);
        chosen.push(i);
      }
    }
    this.scratchSeen.clear();
    const refused = this.checkShards(found, nowMs);
    if (refused !== null) return refused;
    this.s.ws();
    for (let f = 0; f < found.length; f++) {
      const item = found[f] as LiveItem;
      const entry = entries[chosen[f] as number] as { delayMs: number | null; metadata: Uint8Array | null };
      const record = item.record;
      this.s.namespaces.get(item.ns)!.counters.nacked++;
      if (entry.metadata !== null) record.metadata = entry.metadata;
      if (item.ttlPassed) {
        this.s.endItem(item, "expired", nowMs);
      } else if (record.attempt >= record.maxAttempts) {
        this.s.killItem(item, "max_attempts");
      } else {
        this.s.unplace(item);
        this.s.leave(item);
        record.state = "pending";
        record.leaseExpiresAtMs = null;
        record.deliverAtMs = nowMs + (entry.delayMs ?? 0);
        this.s.placePending(item, nowMs);
        this.s.ws().putItem(item.shard, item.key, snapshot(record));
      }
    }
    return this.finish({ nacked: found.length, stale }, nowMs);
  }

  extend(nsName: string, entries: Array<{ receipt: string; leaseMs: number }>, nowMs: number): Result<Reply<{ extended: number; stale: string[] }>> {
    this.advance(nowMs);
    const stale: string[] = [];
    const found: LiveItem[] = [];
    const leases: number[] = [];
    for (const entry of entries) {
      const item = this.leasedByReceipt(nsName, entry.receipt);
      if (item === null) stale.push(entry.receipt);
      else {
        // A receipt named twice: the last lease_ms wins (both count as extended).
        found.push(item);
        leases.push(entry.leaseMs);
      }
    }
    const refused = this.checkShards(found, nowMs);
    if (refused !== null) return refused;
    const set = this.s.ws();
    for (let i = 0; i < found.length; i++) {
      const item = found[i] as LiveItem;
      const expiresAtMs = nowMs + (leases[i] as number);
      item.record.leaseExpiresAtMs = expiresAtMs;
      item.timerNode = this.s.deadlines.reschedule(item.timerNode as HeapNode<Deadline>, expiresAtMs);
      set.putItem(item.shard, item.key, snapshot(item.record));
    }
    return this.finish({ extended: found.length, stale }, nowMs);
  }

  private leasedByReceipt(ns: string, receipt: string): LiveItem | null {
    const parsed = parseReceipt(receipt);
    if (parsed === null) return null;
    const item = this.s.items.get(parsed.id);
    if (item === undefined || item.ns !== ns || item.state !== "leased" || item.record.deliveries !== parsed.deliveries) return null;
    return item;
  }

  /** Items named by receipts, each once; a receipt naming no current delivery (or repeating one) is stale. */
  private leasedByReceipts(ns: string, receipts: string[], stale: string[]): LiveItem[] {
    const found: LiveItem[] = [];
    this.scratchSeen.clear();
    for (const receipt of receipts) {
      const item = this.leasedByReceipt(ns, receipt);
      if (item === null || this.scratchSeen.has(item)) stale.push(receipt);
      else {
        this.scratchSeen.add(item);
        found.push(item);
      }
    }
    this.scratchSeen.clear();
    return found;
  }

  // ---- cancel, get, topics, dead, redrive ----

  cancel(nsName: string, ids: string[], nowMs: number): Result<Reply<{ cancelled: number; missing: string[] }>> {
    this.advance(nowMs);
    const missing: string[] = [];
    const found: LiveItem[] = [];
    this.scratchSeen.clear();
    for (const id of ids) {
      const item = this.s.items.get(id);
      if (item === undefined || item.ns !== nsName) missing.push(id);
      else if (!this.scratchSeen.has(item)) {
        this.scratchSeen.add(item);
        found.push(item);
      }
    }
    this.scratchSeen.clear();
    const refused = this.checkShards(found, nowMs);
    if (refused !== null) return refused;
    this.s.ws();
    for (const item of found) this.s.endItem(item, "cancelled", nowMs);
    return this.finish({ cancelled: found.length, missing }, nowMs);
  }

  get(nsName: string, ids: string[], nowMs: number): Result<{ items: Array<ItemState | EndedItemState | null> }> {
    this.advance(nowMs);
    const out: Array<ItemState | EndedItemState | null> = [];
    for (const id of ids) {
      const item = this.s.items.get(id);
      if (item !== undefined) {
        out.push(item.ns === nsName ? toItemState(item) : null);
        continue;
      }
      const outcome = this.s.outcomes.get(id);
      out.push(outcome !== undefined && outcome.record.ns === nsName ? { id, state: "ended", outcome: outcome.record.outcome } : null);
    }
    return { ok: true, value: { items: out } };
  }

  topics(nsName: string, query: { prefix: string | null; limit: number; after: string | null }): { topics: TopicCounts[]; next: string | null } {
    const ns = this.s.namespaces.get(nsName);
    if (ns === undefined) return { topics: [], next: null };
    const page = ns.page(query.prefix, query.after, query.limit, this.limits);
    return {
      topics: page.topics.map((t) => ({ topic: t.name, ready: t.ready, delayed: t.delayed, waiting: t.waiting, leased: t.leased, dead: t.dead })),
      next: page.next,
    };
  }

  dead(nsName: string, topicName: string, limit: number): { items: ItemState[] } {
    const topic = this.s.namespaces.get(nsName)?.topics.get(topicName);
    const out: ItemState[] = [];
    if (topic === undefined) return { items: out };
    const max = Math.min(limit, this.limits.deadPageMax);
    for (const item of topic.deadLetters) {
      if (out.length >= max) break;
      out.push(toItemState(item));
    }
    return { items: out };
  }

  redrive(nsName: string, topicName: string, ids: string[] | null, nowMs: number): Result<Reply<{ redriven: number }>> {
    this.advance(nowMs);
    const topic = this.s.namespaces.get(nsName)?.topics.get(topicName);
    const found: LiveItem[] = [];
    if (topic !== undefined) {
      if (ids === null) {
        for (const item of topic.deadLetters) {
          if (found.length >= redriveAllMax) break;
          found.push(item);
        }
      } else {
        this.scratchSeen.clear();
        for (const id of ids) {
          const item = this.s.items.get(id);
          if (item === undefined || item.topic !== topic || item.state !== "dead" || this.scratchSeen.has(item)) continue;
          this.scratchSeen.add(item);
          found.push(item);
        }
        this.scratchSeen.clear();
      }
    }
    const refused = this.checkShards(found, nowMs);
    if (refused !== null) return refused;
    const set = this.s.ws();
    for (const item of found) {
      const record = item.record;
      this.s.unplace(item);
      this.s.leave(item);
      record.attempt = 0;
      record.deadReason = null;
      record.state = "pending";
      // A redriven item does not wait on its `after` list again (a failed dependency is
      // never acked). The list is dropped from the record too, so recovery does not
      // re-read it and kill the item a second time.
      record.after = null;
      this.s.placePending(item, nowMs);
      set.putItem(item.shard, item.key, snapshot(record));
      this.s.namespaces.get(nsName)!.counters.redriven++;
    }
    return this.finish({ redriven: found.length }, nowMs);
  }

  stats(namespaces: string[] | null, nowMs: number): Record<string, unknown> {
    return buildStats({
      nowMs,
      namespaces: this.s.namespaces,
      filter: namespaces,
      waiters: this.waiters,
      limits: this.limits,
      engine: {
        items: this.s.items.size,
        outcomesRetained: this.s.outcomes.size,
        deadlines: this.s.deadlines.size,
        dependencyEdges: this.s.graph.edgeCount,
        signatures: this.s.registry.size,
        workerKinds: this.matcher.kindCount,
        backgroundWriteFailures: this.s.backgroundWriteFailures,
        enqueueRollbacks: this.enqueueRollbacks,
      },
    });
  }

  // ---- deadlines ----

  tick(nowMs: number): void {
    if (nowMs > this.lastNowMs) this.lastNowMs = nowMs;
    assert(this.s.set === null, "engine: tick inside an op");
    const max = this.limits.deadlinesPerTickMax;
    for (let handled = 0; handled < max; handled++) {
      const deadline = this.s.deadlines.popDue(nowMs);
      if (deadline === null) break;
      if (deadline.kind === DeadlineKind.WaiterTimeout) {
        const waiter = deadline.waiter as Waiter;
        waiter.timeoutNode = null;
        this.settleWaiter(waiter, { value: { deliveries: [] }, durable: null });
      } else {
        this.s.handleDeadline(deadline, nowMs);
      }
    }
    this.s.endSetBackground();
    this.flushWakeups(nowMs);
  }

  nextDeadlineMs(): number | null {
    return this.s.deadlines.nextMs();
  }

  /** Run due deadlines before an op, so the op sees the state at nowMs (bounded like a tick). */
  private advance(nowMs: number): void {
    if (nowMs > this.lastNowMs) this.lastNowMs = nowMs;
    const next = this.s.deadlines.nextMs();
    if (next !== null && next <= nowMs) this.tick(nowMs);
  }

  private chooseShard(nowMs: number): { shard: number; retryAfterMs: number } {
    const shards = this.writer.shardCount;
    let retryAfterMs = Number.POSITIVE_INFINITY;
    for (let i = 0; i < shards; i++) {
      const shard = (this.nextShard + i) % shards;
      const health = this.writer.shardHealth(shard, nowMs);
      if (health.available) {
        this.nextShard = (shard + 1) % shards;
        return { shard, retryAfterMs: 0 };
      }
      retryAfterMs = Math.min(retryAfterMs, health.retryAfterMs);
    }
    return { shard: -1, retryAfterMs: Number.isFinite(retryAfterMs) ? retryAfterMs : 1000 };
  }

  private refreshShardHealth(nowMs: number): void {
    if (nowMs === this.shardOkAtMs) return;
    this.shardOkAtMs = nowMs;
    let all = true;
    for (let s = 0; s < this.shardOk.length; s++) {
      const ok = this.writer.shardHealth(s, nowMs).available;
      this.shardOk[s] = ok ? 1 : 0;
      if (!ok) all = false;
    }
    this.allShardsOk = all;
  }

  /** Refuse the op (before any change) when a shard it must write is not accepting writes. */
  private checkShards(items: LiveItem[], nowMs: number): { ok: false; failure: Failure } | null {
    for (const item of items) {
      const health = this.writer.shardHealth(item.shard, nowMs);
      if (!health.available) return unavailable(health.retryAfterMs, `storage shard ${item.shard} is not accepting writes`);
    }
    return null;
  }

  private finish<T>(value: T, nowMs: number): Result<Reply<T>> {
    const durable = this.s.endSet() ?? this.writer.begin().end();
    this.flushWakeups(nowMs);
    return { ok: true, value: { value, durable } };
  }

  /** Every index against every other (tests call it after each step). */
  checkInvariants(): void {
    checkEngineInvariants(this.s);
  }
}
