// The queue engine: every op of the contract but the wire, over in-memory
// indexes rebuilt from the store at start. Synchronous: time arrives as nowMs;
// each change goes through the Writer in one WriteSet per op, and replies that
// must wait for disk carry the WriteSet's promise (Reply.durable).
//
// This file is the engine's public face: it runs due deadlines before each op
// and hands the op to the file that owns it. Where things live: enqueue
// (ops/enqueue.ts); dequeue and parked waiters (ops/dequeue.ts, ops/waiters.ts); ack, nack,
// extend (ops/receipt-ops.ts); cancel, get, topics, dead, redrive (ops/admin-ops.ts);
// by-id inspect, take, deadLetter, deliverNow and ordered looks (ops/item-ops.ts);
// list (reads/list.ts); pause and resume (ops/pause.ts);
// timed work (time/maintenance.ts, time/deadlines.ts); items, outcomes and every state
// transition (state/item-states.ts); per namespace its topics (state/namespace.ts); per
// topic the ready heaps per signature group and shard, dead letters and
// idempotency keys (ready/topic.ts); `after` edges (state/dependencies.ts); matching
// verdicts (matching/); start-up (recovery/recovery.ts). docs/SEMANTICS.md lists the
// choices made where the contract is silent.

import { assert } from "../lib/assert.ts";
import type { Limits } from "../limits.ts";
import type { Store } from "../storage/store.ts";
import { DeliveryPrefetch } from "./ready/delivery-prefetch.ts";
import type { LiveItem } from "./state/item.ts";
import { ReadAheadReader } from "./ready/read-ahead.ts";
import type { Writer } from "../storage/writer.ts";
import type { PolicyRecord, ScheduleRecord } from "../storage/record.ts";
import type { StoredShard } from "../storage/store.ts";
import type {
  AckOutcome,
  Delivery,
  DequeueInput,
  DequeueOutcome,
  EndedItemState,
  EngineApi,
  EnqueueItemInput,
  ExplainedItem,
  GroupCounts,
  ItemDetail,
  ItemOpsApi,
  ItemState,
  ListableState,
  ListPage,
  ListQuery,
  PolicyInput,
  PolicyView,
  Reply,
  ScheduleInput,
  ScheduleView,
  Result,
  TopicCounts,
  WaitOutcome,
} from "./api.ts";
import { ItemWaits } from "./ops/item-waits.ts";
import * as adminOps from "./ops/admin-ops.ts";
import * as itemOps from "./ops/item-ops.ts";
import { Dequeuer } from "./ops/dequeue.ts";
import { Enqueuer, type ShardPlacement } from "./ops/enqueue.ts";
import { ReceiptFields } from "./state/ids.ts";
import { checkEngineInvariants } from "./state/invariants.ts";
import { ItemStates } from "./state/item-states.ts";
import { DeadlineQueue } from "./time/deadlines.ts";
import type { EngineDeadline } from "./time/engine-deadlines.ts";
import { runDueDeadlines } from "./time/maintenance.ts";
import { listItems } from "./reads/list.ts";
import type { OpContext } from "./ops/op-context.ts";
import { Pauses } from "./ops/pause.ts";
import { GroupPauses } from "./groups/group-pauses.ts";
import { PolicyOps } from "./groups/policy-ops.ts";
import { groupsPage } from "./reads/groups.ts";
import { explain } from "./reads/explain.ts";
import { localBuckets, type QuotaBuckets } from "./admission/quota.ts";
import * as receiptOps from "./ops/receipt-ops.ts";
import { loadStoreInSteps, type RecoveryProgress } from "./recovery/recovery.ts";
import { dropShardInSteps, type FiledShard, fileShardInSteps, finishShardInSteps } from "./recovery/shard-moves.ts";
import { idByKey, matchingView, readySinceMs, type EngineInspector, type MatchingView } from "./reads/inspect.ts";
import { type RemoteEnd, remoteDependencyEnded, remoteWaitedOn } from "./ops/remote-dependencies.ts";
import { buildStats } from "./reads/stats.ts";
import type { EngineStats } from "./reads/stats-shape.ts";
import { UnmatchableReporter } from "./matching/unmatchable.ts";
import type { SharedTopicBounds } from "./groups/shared-topic-bound.ts";
import { SharedTopicGate } from "./groups/shared-topic-gate.ts";
import { Schedules, type TickRefusalListener } from "./schedules/schedules.ts";

export type { RecoveryProgress } from "./recovery/recovery.ts";

export interface EngineOptions {
  store: Store;
  writer: Writer;
  limits: Limits;
  namespaces: Record<string, { enqueuePerMinute: number | null }>;
  nowMs: number;
  /**
   * Cluster mode (src/cluster/): where keyed and `after` items must live, and
   * every delivery waits for its lease commit. Absent on a single node.
   */
  cluster?: {
    placement: ShardPlacement;
    /** The namespaces' leased quota buckets, kept by the node, apart from its shards (absent: local buckets from `namespaces`). */
    quotaBuckets?: QuotaBuckets;
    /** Topics' own max_leased and rate shared with the other nodes (groups/shared-topic-gate.ts), kept by the node, apart from its shards. */
    topicBounds?: SharedTopicBounds;
  };
}

export class Engine implements EngineApi, ItemOpsApi, EngineInspector {
  private readonly states: ItemStates;
  /** The one deadline heap: items', waiters', pauses' and outcomes' deadlines, served by one timer (time/maintenance.ts). */
  private readonly deadlines = new DeadlineQueue<EngineDeadline>();
  private readonly dequeuer: Dequeuer;
  private readonly enqueuer: Enqueuer;
  private readonly pauses: Pauses;
  private readonly groupPauses: GroupPauses;
  private readonly policyOps: PolicyOps;
  /** Parked `wait` requests (ops/item-waits.ts). */
  private readonly itemWaits: ItemWaits;
  private readonly schedules: Schedules;
  private readonly ctx: OpContext;
  /** The latest nowMs seen, for work done when a commit lands outside any op. */
  private lastNowMs: number;
  /** Cluster mode: whether an id lives on a shard this engine does not hold (null on a single node). */
  private readonly elsewhere: ((id: string) => boolean) | null;
  /** Cluster mode: shards dropped since start; their acked ends may still be held (outcomes/ended-items.ts). */
  private readonly droppedShards = new Set<number>();

  private constructor(
    writer: Writer,
    store: Store,
    limits: Limits,
    quotas: QuotaBuckets,
    boot: number,
    nowMs: number,
    placement: ShardPlacement | null,
  ) {
    // Read-ahead (ready/read-ahead.ts) on a single node only: a cluster node may lose a shard between the read and the dequeue.
    // Not under a volatile writer either: it has no commits to wait for, so nothing would read ahead (035).
    const readAhead = placement === null && writer.volatile !== true ? new ReadAheadReader(store, writer) : null;
    this.states = new ItemStates(writer, readAhead ?? store, limits, quotas, boot, this.deadlines);
    this.lastNowMs = nowMs;
    this.elsewhere = placement === null ? null : (id: string) => placement.elsewhere(id);
    const latestNowMs = (): number => this.lastNowMs;
    const prefetch = store.prefetchItems === undefined ? null : new DeliveryPrefetch<LiveItem>({ prefetchItems: (shard, keys) => store.prefetchItems?.(shard, keys) });
    this.dequeuer = new Dequeuer(this.states, writer, this.deadlines, latestNowMs, placement !== null, prefetch);
    this.ctx = { states: this.states, writer, scratchSeen: new Set(), scratchFound: [], scratchReceipt: new ReceiptFields(), wake: (wakeNowMs) => this.dequeuer.wake(wakeNowMs) };
    this.enqueuer = new Enqueuer(this.ctx, latestNowMs, placement);
    this.pauses = new Pauses(this.states, this.deadlines, placement !== null);
    this.groupPauses = new GroupPauses(this.states, this.deadlines, placement !== null);
    this.policyOps = new PolicyOps(this.states);
    this.itemWaits = new ItemWaits(this.states, this.deadlines, (ns, ids) => adminOps.itemStatesOf(this.ctx, ns, ids));
    this.schedules = new Schedules(this.states, this.deadlines, placement, (ns, item, tickNowMs, tick) => this.enqueuer.enqueue(ns, [item], tickNowMs, tick));
    if (readAhead !== null) writer.setIdleListener(() => this.dequeuer.readAheadNext(readAhead));
  }

  /** Build the engine from what the store holds (an empty store is a fresh start). */
  static recover(options: EngineOptions): Engine {
    const steps = Engine.recoverInSteps(options);
    for (;;) {
      const step = steps.next();
      if (step.done === true) return step.value;
    }
  }

  /**
   * The same recovery in steps of at most `limits.recoveryRecordsPerTurnMax`
   * records, yielding the progress after each; the engine is the generator's
   * return value and must not be used before. The caller lets its event loop
   * turn between steps (`orq serve` answers /healthz and logs progress).
   */
  static *recoverInSteps(options: EngineOptions): Generator<RecoveryProgress, Engine> {
    assert(options.store.shardCount === options.writer.shardCount, "engine: store and writer disagree on shards");
    const placement = options.cluster?.placement ?? null;
    const engine = new Engine(options.writer, options.store, options.limits, options.cluster?.quotaBuckets ?? localBuckets(options.namespaces), options.store.meta.boots, options.nowMs, placement);
    const topicBounds = options.cluster?.topicBounds;
    if (topicBounds !== undefined) {
      engine.dequeuer.sharedGate = new SharedTopicGate(topicBounds, engine.states.items, options.writer.shardCount, engine.dequeuer.bounds.passedOver);
    }
    // Policies first: topics made while items load find theirs (a group's bounds, the rotation).
    engine.policyOps.load(options.store.loadPolicies(), options.nowMs);
    yield* loadStoreInSteps(engine.states, options.store, options.nowMs, options.limits.recoveryRecordsPerTurnMax, engine.elsewhere);
    const pauses = [...options.store.loadPauses()];
    engine.pauses.load(pauses, options.nowMs);
    engine.groupPauses.load(pauses, options.nowMs);
    engine.schedules.load(options.store.loadSchedules(), options.nowMs);
    const items = engine.states.items;
    options.store.setLiveKeyFloor?.((shard) => items.lowestKey(shard));
    return engine;
  }

  /**
   * Cluster mode: file one more shard into this running engine, in steps of
   * at most `recordsPerStepMax` records (recovery/shard-moves.ts), then
   * finish it (finishShardInSteps). The caller keeps the shard unwritable (so
   * nothing of it is delivered) until the finish is done, then serves it and
   * calls shardServed in the same turn. Until then its deadlines that would
   * write it wait (ItemStates.parkShard). `ahead`: the shard is not this
   * node's yet, only read ahead of its claim (decisions/053): nothing of it
   * is written, its items with `after` ids wait for the finish, and the
   * caller drops it unless the claim keeps the rows read. The other shards
   * serve throughout; no op may run inside a step.
   */
  *fileShardInSteps(stored: StoredShard, nowMs: number, recordsPerStepMax: number, ahead: boolean): Generator<RecoveryProgress, FiledShard> {
    this.states.parkShard(stored.shard);
    return yield* fileShardInSteps(this.states, stored, nowMs, recordsPerStepMax, this.elsewhere, this.droppedShards.has(stored.shard), ahead);
  }

  /** Cluster mode: the rest of a filed shard's adoption, once the node owns it (recovery/shard-moves.ts). */
  *finishShardInSteps(filed: FiledShard, nowMs: number, recordsPerStepMax: number): Generator<RecoveryProgress, void> {
    yield* finishShardInSteps(this.states, filed, nowMs, recordsPerStepMax, this.elsewhere);
    // Parked dequeues were served while the shard was unwritable: its topics are looked at again once it serves.
    for (const topic of filed.touched) this.states.boundReleased(topic);
  }

  /** fileShardInSteps, not ahead, then finishShardInSteps. */
  *adoptShardInSteps(stored: StoredShard, nowMs: number, recordsPerStepMax: number): Generator<RecoveryProgress, void> {
    const filed = yield* this.fileShardInSteps(stored, nowMs, recordsPerStepMax, false);
    yield* this.finishShardInSteps(filed, nowMs, recordsPerStepMax);
  }

  /**
   * Cluster mode: an adopted shard serves now: its deadlines that waited come
   * due, its schedules start (as at a start) and parked dequeues see its items.
   */
  shardServed(shard: number, schedules: Iterable<ScheduleRecord>, nowMs: number): void {
    this.states.unparkShard(shard, true);
    this.advance(nowMs);
    this.dequeuer.shardsChanged();
    this.schedules.load(schedules, nowMs);
    this.ctx.wake(nowMs);
  }

  /**
   * Cluster mode: the shard is no longer this node's. Its schedules stop and
   * parked `wait`s on its items answer at once; its items, leases, deadlines, dependencies and outcomes leave
   * memory in steps of at most `recordsPerStepMax` items; nothing is written
   * (the new owner loads them from the store). The caller has let every
   * commit touching the shard land first, so no commit listener finds one of
   * its items gone, and keeps it unserved throughout.
   */
  *dropShardInSteps(shard: number, recordsPerStepMax: number): Generator<RecoveryProgress, void> {
    assert(!this.states.setOpen, "engine: dropShard inside an op");
    this.schedules.dropShard(shard);
    // Parked `wait`s on its items answer now, with the states then (the new owner answers the next one).
    const slots = this.states.items.shardSlots(shard);
    if (slots !== null) this.itemWaits.releaseKeys(slots.keys);
    // Nothing is written: a lease or TTL that ends between the steps waits, and goes with its item.
    this.states.parkShard(shard);
    yield* dropShardInSteps(this.states, shard, recordsPerStepMax);
    this.states.unparkShard(shard, false);
    this.droppedShards.add(shard);
    // Leases that left freed max_leased bounds: parked dequeues look again.
    this.ctx.wake(this.lastNowMs);
  }

  /** dropShardInSteps at once (tests). */
  dropShard(shard: number): void {
    const steps = this.dropShardInSteps(shard, Number.MAX_SAFE_INTEGER);
    while (steps.next().done !== true);
  }

  /** Called when a new deadline becomes the earliest outside a direct call (e.g. a lease granted to a parked dequeue). */
  set onEarlierDeadline(listener: (() => void) | null) {
    this.deadlines.onEarlier = listener;
  }

  enqueue(nsName: string, inputs: EnqueueItemInput[], nowMs: number): Result<Reply<{ ids: string[] }>> {
    this.advance(nowMs);
    return this.enqueuer.enqueue(nsName, inputs, nowMs);
  }

  dequeue(nsName: string, input: DequeueInput, nowMs: number): DequeueOutcome {
    this.advance(nowMs);
    return this.dequeuer.dequeue(nsName, input, nowMs);
  }

  cancelWaiters(owner: number): void {
    this.dequeuer.cancelWaiters(owner);
    this.itemWaits.cancelOwner(owner);
  }

  releaseWaiters(): void {
    this.dequeuer.releaseWaiters();
    this.itemWaits.releaseAll();
  }

  ack(nsName: string, receipts: string[], nowMs: number, results: ReadonlyArray<Uint8Array | null> | null = null): AckOutcome {
    this.advance(nowMs);
    return receiptOps.ack(this.ctx, nsName, receipts, nowMs, results);
  }

  nack(
    nsName: string,
    entries: Array<{ receipt: string; delayMs: number | null; metadata: Uint8Array | null; priority?: number | null }>,
    nowMs: number,
  ): Result<Reply<{ nacked: number; stale: string[] }>> {
    this.advance(nowMs);
    return receiptOps.nack(this.ctx, nsName, entries, nowMs);
  }

  extend(nsName: string, entries: Array<{ receipt: string; leaseMs: number; metadata?: Uint8Array | null }>, nowMs: number): Result<Reply<{ extended: number; stale: string[] }>> {
    this.advance(nowMs);
    return receiptOps.extend(this.ctx, nsName, entries, nowMs);
  }

  cancel(nsName: string, ids: string[], nowMs: number): Result<Reply<{ cancelled: number; missing: string[] }>> {
    this.advance(nowMs);
    return adminOps.cancel(this.ctx, nsName, ids, nowMs);
  }

  get(nsName: string, ids: string[], nowMs: number): Result<{ items: Array<ItemState | EndedItemState | null> }> {
    this.advance(nowMs);
    return adminOps.get(this.ctx, nsName, ids);
  }

  wait(nsName: string, ids: string[], waitMs: number, owner: number, nowMs: number): WaitOutcome {
    this.advance(nowMs);
    return this.itemWaits.wait(nsName, ids, waitMs, owner, nowMs);
  }

  topics(nsName: string, query: { prefix: string | null; limit: number; after: string | null }): { topics: TopicCounts[]; next: string | null } {
    return adminOps.topics(this.ctx, nsName, query);
  }

  list(nsName: string, topicName: string, query: ListQuery, nowMs: number): ListPage {
    this.advance(nowMs);
    return listItems(this.states, nsName, topicName, query);
  }

  pause(nsName: string, topicName: string, forMs: number | null, nowMs: number, group: string | null = null): Result<Reply<{ pausedUntilMs: number | null }>> {
    this.advance(nowMs);
    if (group !== null) return this.groupPauses.pause(this.ctx, nsName, topicName, group, forMs, this.pauses.size, nowMs);
    return this.pauses.pause(this.ctx, nsName, topicName, forMs, nowMs, this.groupPauses.size);
  }

  resume(nsName: string, topicName: string, nowMs: number, group: string | null = null): Result<Reply<{ resumed: boolean }>> {
    this.advance(nowMs);
    if (group !== null) return this.groupPauses.resume(this.ctx, nsName, topicName, group, nowMs);
    return this.pauses.resume(this.ctx, nsName, topicName, nowMs);
  }

  /** pause with a group (ClusterEngine's name for it). */
  pauseGroup(nsName: string, topicName: string, group: string, forMs: number | null, nowMs: number): Result<Reply<{ pausedUntilMs: number | null }>> {
    return this.pause(nsName, topicName, forMs, nowMs, group);
  }

  /** resume with a group. */
  resumeGroup(nsName: string, topicName: string, group: string, nowMs: number): Result<Reply<{ resumed: boolean }>> {
    return this.resume(nsName, topicName, nowMs, group);
  }

  /** Cluster mode: a topic's (or group's) pause now (undefined: not paused), to compare with the database's. */
  pausedUntil(nsName: string, topicName: string, group: string | null = null): number | null | undefined {
    if (group !== null) return this.groupPauses.pausedUntil(nsName, topicName, group);
    return this.pauses.pausedUntil(nsName, topicName);
  }

  /** Cluster mode: whether this engine's own write of the topic's (or group's) pause is still on its way to the store. */
  pauseWriting(nsName: string, topicName: string, group: string | null = null): boolean {
    if (group !== null) return this.groupPauses.writing(nsName, topicName, group);
    return this.pauses.writing(nsName, topicName);
  }

  /** Cluster mode: another node committed this topic's (or group's) pause (its end, null: until resume) or resume (undefined). */
  applyStoredPause(nsName: string, topicName: string, group: string | null, untilMs: number | null | undefined, nowMs: number): void {
    this.advance(nowMs);
    if (group !== null) this.groupPauses.applyStored(nsName, topicName, group, untilMs, nowMs);
    else this.pauses.applyStored(nsName, topicName, untilMs, nowMs);
    this.ctx.wake(nowMs);
  }

  policy(nsName: string, input: PolicyInput, nowMs: number): Result<Reply<{ policy: PolicyView } | { cleared: boolean }>> {
    this.advance(nowMs);
    return this.policyOps.policy(this.ctx, nsName, input, nowMs);
  }

  policies(nsName: string, topicName: string, query: { limit: number; after: string | null }): { policies: PolicyView[]; next: string | null } {
    return this.policyOps.policies(nsName, topicName, query);
  }

  /** Cluster mode: a policy as this engine holds it (null: none), to compare with the database's. */
  storedPolicy(nsName: string, topicName: string, group: string | null): PolicyRecord | null {
    return this.policyOps.stored(nsName, topicName, group);
  }

  /** Cluster mode: whether this engine's own write of the policy is still on its way to the store. */
  policyWriting(nsName: string, topicName: string, group: string | null): boolean {
    return this.policyOps.writing(nsName, topicName, group);
  }

  /** Cluster mode: another node committed this policy (null: cleared). */
  applyStoredPolicy(nsName: string, topicName: string, group: string | null, record: PolicyRecord | null, nowMs: number): void {
    this.advance(nowMs);
    this.policyOps.applyStored(nsName, topicName, group, record, nowMs);
    this.states.endSetBackground();
    this.ctx.wake(nowMs);
  }

  groups(nsName: string, topicName: string, query: { limit: number; after: string | null }): { groups: GroupCounts[]; next: string | null } {
    return groupsPage(this.states.namespaces, nsName, topicName, query);
  }

  explain(nsName: string, ids: string[], nowMs: number): Result<{ items: Array<ExplainedItem | null> }> {
    this.advance(nowMs);
    const sources = { states: this.states, asks: this.dequeuer.asks, matcher: this.dequeuer.matcher, askWindowMs: this.states.limits.unmatchableAskWindowMs };
    return { ok: true, value: explain(sources, nsName, ids, nowMs) };
  }

  /** Set a recurring item (schedules/schedules.ts); replaces one of the same name. */
  schedule(nsName: string, input: ScheduleInput, nowMs: number): Result<Reply<{ name: string; nextAtMs: number | null }>> {
    this.advance(nowMs);
    return this.schedules.schedule(this.ctx, nsName, input, nowMs);
  }

  unschedule(nsName: string, name: string, nowMs: number): Result<Reply<{ removed: boolean }>> {
    this.advance(nowMs);
    return this.schedules.unschedule(this.ctx, nsName, name, nowMs);
  }

  /** A page of a namespace's schedules, by name. */
  scheduleList(nsName: string, query: { limit: number; after: string | null }): { schedules: ScheduleView[]; next: string | null } {
    return this.schedules.list(nsName, query);
  }

  /** The live view of one schedule this engine holds, or null (cluster mode's list of every node's). */
  scheduleView(nsName: string, name: string): ScheduleView | null {
    return this.schedules.view(nsName, name);
  }

  /** Told of each tick the namespace quota (or anything else) refused: the server logs it. */
  set onScheduleTickRefused(listener: TickRefusalListener | null) {
    this.schedules.onRefused = listener;
  }

  /** Topics paused now. */
  get pausedTopicCount(): number {
    return this.pauses.size;
  }

  dead(nsName: string, topicName: string, limit: number): { items: ItemState[] } {
    return adminOps.dead(this.ctx, nsName, topicName, limit);
  }

  redrive(nsName: string, topicName: string, ids: string[] | null, nowMs: number): Result<Reply<{ redriven: number }>> {
    this.advance(nowMs);
    return adminOps.redrive(this.ctx, nsName, topicName, ids, nowMs);
  }

  inspect(nsName: string, id: string, nowMs: number): ItemDetail | null {
    this.advance(nowMs);
    return itemOps.inspect(this.ctx, nsName, id);
  }

  take(nsName: string, id: string, leaseMs: number | null, nowMs: number): Result<Reply<{ delivery: Delivery | null }>> {
    this.advance(nowMs);
    return itemOps.take(this.ctx, nsName, id, leaseMs, nowMs);
  }

  deadLetter(
    nsName: string,
    entries: Array<{ receipt: string; priority: number | null; reason: string }>,
    nowMs: number,
  ): Result<Reply<{ dead: number; stale: string[] }>> {
    this.advance(nowMs);
    return itemOps.deadLetter(this.ctx, nsName, entries, nowMs);
  }

  deliverNow(nsName: string, ids: string[], nowMs: number): Result<Reply<{ moved: number; missing: string[] }>> {
    this.advance(nowMs);
    return itemOps.deliverNow(this.ctx, nsName, ids, nowMs);
  }

  firstIds(nsName: string, topicName: string, state: ListableState, limit: number): string[] {
    return itemOps.firstIds(this.ctx, nsName, topicName, state, limit);
  }

  bestReadyTopic(nsName: string, topicNames: string[]): string | null {
    return itemOps.bestReadyTopic(this.ctx, nsName, topicNames);
  }

  countReadyBelow(nsName: string, topicName: string | null, priorityBelow: number): number {
    return itemOps.countReadyBelow(this.ctx, nsName, topicName, priorityBelow);
  }

  // Read-only questions for the web dashboard (reads/inspect.ts); its caller checks the namespace scope.
  matchingView(nsName: string, topicName: string, nowMs: number): MatchingView {
    const sources = { namespaces: this.states.namespaces, asks: this.dequeuer.asks, registry: this.states.registry, askWindowMs: this.states.limits.unmatchableAskWindowMs };
    return matchingView(sources, nsName, topicName, nowMs);
  }

  idByKey(nsName: string, topicName: string, key: string): string | null {
    return idByKey(this.states.namespaces, nsName, topicName, key);
  }

  readySinceMs(nsName: string, topicNames: readonly string[]): Array<number | null> {
    return readySinceMs(this.states.namespaces, nsName, topicNames);
  }

  /** Cluster mode: up to `max` ids items wait on that live on other nodes' shards (ops/remote-dependencies.ts). */
  remoteWaitedOn(elsewhere: (id: string) => boolean, max: number): string[] {
    return remoteWaitedOn(this.states, elsewhere, max);
  }

  /** Cluster mode: a dependency on another node's shard ended. */
  remoteDependencyEnded(id: string, how: RemoteEnd, nowMs: number): void {
    this.advance(nowMs);
    remoteDependencyEnded(this.ctx, id, how, nowMs);
  }

  /** Cluster mode: the topic's leased items on `shard`, for the node's hand-back of unused slots (groups/shared-topic-gate.ts). */
  sharedLeased(nsName: string, topicName: string, shard: number): number {
    const topic = this.states.namespaces.get(nsName)?.topics.get(topicName);
    const gate = this.dequeuer.sharedGate;
    return topic === undefined || gate === null ? 0 : gate.leasedOn(topic, shard);
  }

  /** Cluster mode: the node drew tokens or slots of the topic's shared bounds: its parked dequeues look again. */
  sharedBoundReleased(nsName: string, topicName: string, nowMs: number): void {
    this.advance(nowMs);
    const topic = this.states.namespaces.get(nsName)?.topics.get(topicName);
    if (topic === undefined) return;
    this.states.boundReleased(topic);
    this.ctx.wake(nowMs);
  }

  /** Live items (dead letters included): what recovery loaded, for the server's start-up decisions. */
  get itemCount(): number {
    return this.states.items.size;
  }

  stats(namespaces: string[] | null, nowMs: number): EngineStats {
    return buildStats({
      nowMs,
      namespaces: this.states.namespaces,
      filter: namespaces,
      waiters: this.dequeuer.waiters,
      limits: this.states.limits,
      unmatchable: new UnmatchableReporter(this.dequeuer.asks, this.states.registry, this.states.limits.unmatchableAskWindowMs),
      engine: {
        items: this.states.items.size,
        topics: this.states.namespaces.topicCount,
        namespaces: this.states.namespaces.size,
        outcomesRetained: this.states.ended.size,
        resultsRetained: this.states.ended.resultCount,
        resultsRetainedBytes: this.states.ended.resultBytes,
        itemWaitsParked: this.itemWaits.total,
        itemWaitsAnsweredTotal: this.itemWaits.answered,
        deadlines: this.deadlines.size,
        dependencyEdges: this.states.graph.edgeCount,
        signatures: this.states.registry.size,
        workerKinds: this.dequeuer.matcher.kindCount,
        backgroundWriteFailures: this.states.backgroundWriteFailures,
        enqueueRollbacks: this.enqueuer.rollbacks,
        pausedTopics: this.pauses.size,
        prefetchKeysTotal: this.dequeuer.prefetchKeysTotal,
        passedOver: { ...this.dequeuer.bounds.passedOver },
        preferenceDeliveries: { ...this.dequeuer.fitTotals },
        schedules: this.schedules.size,
        scheduleTicks: { ...this.schedules.ticks },
      },
    });
  }

  tick(nowMs: number): void {
    if (nowMs > this.lastNowMs) this.lastNowMs = nowMs;
    runDueDeadlines(
      this.states,
      this.deadlines,
      this.states.limits.deadlinesPerTickMax,
      (waiter) => this.dequeuer.timeOut(waiter),
      (pause) => this.pauses.end(pause),
      (pause) => this.groupPauses.end(pause),
      (target, refillNowMs) => this.dequeuer.bounds.refill(target, refillNowMs),
      nowMs,
      (wait) => this.itemWaits.timeOut(wait),
      (schedule) => this.schedules.tickDue(schedule),
    );
    this.schedules.fireDue(nowMs);
    this.dequeuer.wake(nowMs);
  }

  /** Write the deferred at_least_once leases now (graceful shutdown: a restart then keeps them). */
  flushDeferredWrites(): void {
    assert(!this.states.setOpen, "engine: flush inside an op");
    this.states.flushLeaseWrites(true);
    this.states.endSetBackground();
  }

  nextDeadlineMs(): number | null {
    return this.deadlines.nextMs();
  }

  /** Run due deadlines before an op, so the op sees the state at nowMs (bounded like a tick). */
  private advance(nowMs: number): void {
    if (nowMs > this.lastNowMs) this.lastNowMs = nowMs;
    const next = this.deadlines.nextMs();
    if (next !== null && next <= nowMs) this.tick(nowMs);
  }

  /** Every index against every other (tests call it after each step). */
  checkInvariants(): void {
    checkEngineInvariants(this.states, this.deadlines);
    this.itemWaits.checkInvariants();
    this.pauses.checkInvariants();
    this.groupPauses.checkInvariants();
    this.schedules.checkInvariants();
  }
}
