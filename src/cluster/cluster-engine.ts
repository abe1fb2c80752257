// The engine a cluster node serves: the single-node Engine, holding the
// shards this node serves, behind the contract's routing. A request that
// needs a shard another node owns is answered MOVED (nothing done); one that
// needs a shard no live node serves yet (or this node is still loading),
// UNAVAILABLE with a retry hint.
//
// When the set of served shards changes, only the moving shard stops
// serving (moveShards, docs/decisions/038-per-shard-moves.md): a shard given
// up is unserved at once (the router answers MOVED), and once every commit
// begun so far has landed its items leave the engine in steps
// (Engine.dropShardInSteps); a shard taken on is loaded into the running engine in steps of at most
// clusterLimits.adoptTurnMs, with a turn of the event loop between them, and
// serves from the end of its last step. The other shards serve throughout:
// the engine is never replaced, so parked dequeues on them stay parked.

import type { Engine } from "../engine/engine.ts";
import type { EngineInspector } from "../engine/reads/inspect.ts";
import type {
  AckOutcome,
  DequeueInput,
  DequeueOutcome,
  EndedItemState,
  EngineApi,
  EnqueueItemInput,
  ExplainedItem,
  Failure,
  GroupCounts,
  ItemState,
  ListPage,
  ListQuery,
  PolicyInput,
  PolicyView,
  Reply,
  Result,
  TopicCounts,
  WaitOutcome,
  ScheduleInput,
  ScheduleView,
} from "../engine/api.ts";
import type { ShardPlacement } from "../engine/ops/enqueue.ts";
import type { RemoteEnd } from "../engine/ops/remote-dependencies.ts";
import type { EngineStats } from "../engine/reads/stats-shape.ts";
import type { PolicyRecord, ScheduleRecord } from "../storage/record.ts";
import type { StoredShard } from "../storage/store.ts";
import type { FiledShard } from "../engine/recovery/shard-moves.ts";
import { scheduleMoveRefused, viewOfRecord } from "../engine/schedules/schedules.ts";
import { shardOfIdOrReceipt } from "../lib/id-grammar.ts";
import { clusterLimits } from "../limits.ts";

/** Decides, per shard, whether this node may act on it now. */
export interface ShardRouter {
  /** null when this node serves the shard now; else shard_elsewhere (another node owns it) or shard_unserved. */
  route(shard: number): Failure | null;
}

/** What a shard's move needs from the node: its stored state, time, turns of the event loop, and whom to tell. */
export interface ShardMoves {
  /** The shards the engine should hold now (served by this node, loaded into the store). */
  target(): readonly number[];
  /** The shard's stored state, as the node's store loaded it (PostgresStore.storedShard). */
  stored(shard: number): StoredShard;
  /** Shards read ahead of their claim, in claim order (decisions/050), that the engine may file ahead (decisions/053). */
  readAhead(): readonly number[];
  /**
   * A shard read ahead: its stored state as read (PostgresStore.storedShardAhead)
   * and the read it came from, or null once the read was let go or its claim took it.
   */
  storedAhead(shard: number): { stored: StoredShard; read: object } | null;
  /** Whether a copy filed from `read` is still wanted: that read is still held, or the shard's claim is loading. */
  aheadWanted(shard: number, read: object): boolean;
  /** The engine holds the shard's items now: serve it (called in the turn of the last step). */
  serve(shard: number): void;
  /** The engine forgot the shard: the store forgets it too. */
  forgotten(shard: number): void;
  /** Wall time for the engine. */
  nowMs(): number;
  /** Monotonic time for a step's budget. */
  stopwatchMs(): number;
  /** Resolves after the event loop turned and read the sockets, so requests on the other shards are answered between steps. */
  turn(): Promise<void>;
}

/** The shard an id or receipt names, or -1 when the text is neither (the engine then answers as for any bad id). */
export function shardPrefix(text: string): number {
  return shardOfIdOrReceipt(text) ?? -1;
}

const handingOver: Failure = { kind: "shard_unserved", message: "this node is handing its shards over; retry", retryAfterMs: clusterLimits.handoverRetryAfterMs };

export class ClusterEngine implements EngineApi {
  /** Set by freeze() (SIGTERM): everything is refused from then on. */
  private frozen = false;
  /** Shards whose items the engine holds: served, or being adopted. */
  private readonly held = new Set<number>();
  /** Held shards this node lost since (shardLost): dropped at the next pass even if claimed again meanwhile, then adopted afresh. */
  private readonly lost = new Set<number>();
  /**
   * Held shards filed ahead of their claim: the read each was filed from, and
   * what its finish still has to do (null while filing; decisions/053).
   */
  private readonly ahead = new Map<number, { read: object; filed: FiledShard | null }>();
  private moving: Promise<void> | null = null;
  private moveAgain = false;
  /** Shards adopted and dropped so far, and filed ahead of a claim (tests, logs). */
  readonly moveCounts = { adopted: 0, dropped: 0, filedAhead: 0 };
  /** Shards filed ahead of a claim by what became of the copy: finished at the claim, or dropped (let go, or stale); for /metrics. */
  readonly filedAheadCounts = { finished: 0, dropped: 0 };

  constructor(
    private readonly inner: Engine,
    private readonly router: ShardRouter,
    private readonly placement: ShardPlacement,
    private readonly shardCount: number,
    /** Resolves when every commit begun so far has landed (the writer's drain). */
    private readonly drain: () => Promise<void>,
    /** A page of a namespace's schedules on every shard, as the database holds them (storage/postgres/schedule-rows.ts). */
    private readonly storedSchedules: (ns: string, after: string | null, limit: number) => Promise<ScheduleRecord[]> = async () => [],
    /** The shard a stored schedule lives on, or null when none of that name is stored (storage/postgres/schedule-rows.ts). */
    private readonly storedShard: (ns: string, name: string) => Promise<number | null> = async () => null,
    /** How shards move in and out (the node's); null for an engine whose shards never change. */
    private readonly moves: ShardMoves | null = null,
  ) {
    // The engine handed over was recovered from the shards wanted now (none, for a node before it joins).
    for (const shard of moves?.target() ?? []) this.held.add(shard);
  }

  /**
   * Bring the engine's shards to what moves.target() says: the shards no
   * longer wanted leave once the commits begun so far have landed (the
   * router already refuses them), then each new one is adopted in steps.
   * Asked again while moving, it looks at the target once more when done.
   * Resolves when the engine holds the target.
   */
  /** Whether shards are moving into or out of the engine now. */
  get shardsMoving(): boolean {
    return this.moving !== null;
  }

  moveShards(): Promise<void> {
    if (this.moving !== null) {
      this.moveAgain = true;
      return this.moving;
    }
    this.moving = (async () => {
      do {
        this.moveAgain = false;
        await this.moveOnce();
      } while (this.moveAgain && !this.frozen);
    })().finally(() => {
      this.moving = null;
    });
    return this.moving;
  }

  private async moveOnce(): Promise<void> {
    const moves = this.moves;
    if (moves === null || this.frozen) return;
    const target = new Set(moves.target());
    // A shard filed ahead stays while its read or its claim's load is held; one found stale is lost.
    const drops = [...this.held].filter((shard) => this.lost.has(shard) || (!target.has(shard) && !this.aheadWanted(moves, shard)));
    if (drops.length > 0) {
      // A commit in flight may still settle into an item of these shards (an enqueue made it takeable): let it land first.
      await this.drain();
      if (this.frozen) return;
      for (const shard of drops) {
        await this.inSteps(moves, this.inner.dropShardInSteps(shard, clusterLimits.adoptRecordsPerStep));
        this.held.delete(shard);
        this.lost.delete(shard);
        if (this.ahead.delete(shard)) this.filedAheadCounts.dropped++;
        this.moveCounts.dropped++;
        moves.forgotten(shard);
      }
    }
    for (const shard of [...target].sort((a, b) => a - b)) {
      if ((this.held.has(shard) && !this.ahead.has(shard)) || this.frozen || !moves.target().includes(shard)) continue;
      await this.adopt(moves, shard);
    }
    // Then the shards read ahead of a claim, while their owner's lease runs out.
    for (const shard of moves.readAhead()) {
      if (this.held.has(shard) || this.frozen) continue;
      await this.fileAhead(moves, shard);
    }
  }

  /**
   * Take one shard on in steps of at most adoptTurnMs, a turn of the event
   * loop between them: file it (unless it was filed ahead), finish it, and
   * serve it if it is still wanted.
   */
  private async adopt(moves: ShardMoves, shard: number): Promise<void> {
    const stored = moves.stored(shard);
    let filed = this.ahead.get(shard)?.filed ?? undefined;
    this.ahead.delete(shard);
    const filedAhead = filed !== undefined;
    if (filed === undefined) {
      this.held.add(shard);
      filed = await this.inSteps(moves, this.inner.fileShardInSteps(stored, moves.nowMs(), clusterLimits.adoptRecordsPerStep, false));
    }
    if (filed !== undefined) await this.inSteps(moves, this.inner.finishShardInSteps(filed, moves.nowMs(), clusterLimits.adoptRecordsPerStep));
    // Lost while it loaded: the next pass drops it (and adopts it afresh if it was claimed again).
    if (this.frozen || !moves.target().includes(shard) || this.lost.has(shard)) {
      this.moveAgain = true;
      return;
    }
    moves.serve(shard);
    this.inner.shardServed(shard, stored.schedules, moves.nowMs());
    this.moveCounts.adopted++;
    if (filedAhead) this.filedAheadCounts.finished++;
  }

  /**
   * File a shard read ahead of its claim, unserved (decisions/053): its
   * claim, if it kept the rows this copy was filed from, then only finishes
   * it. Let go (its owner renewed, another node claimed it, a newer read
   * replaced it) or stale at the claim (aheadClaimed), it is dropped at the
   * next pass.
   */
  private async fileAhead(moves: ShardMoves, shard: number): Promise<void> {
    const got = moves.storedAhead(shard);
    if (got === null) return;
    this.held.add(shard);
    const entry: { read: object; filed: FiledShard | null } = { read: got.read, filed: null };
    this.ahead.set(shard, entry);
    const filed = await this.inSteps(moves, this.inner.fileShardInSteps(got.stored, moves.nowMs(), clusterLimits.adoptRecordsPerStep, true));
    if (filed === undefined) return;
    entry.filed = filed;
    this.moveCounts.filedAhead++;
    // Claimed, let go or found stale while it filed: the next pass finishes or drops it.
    this.moveAgain = true;
  }

  /** Whether a shard filed ahead is still wanted: the read it was filed from is held, or its claim is loading. */
  private aheadWanted(moves: ShardMoves, shard: number): boolean {
    const entry = this.ahead.get(shard);
    return entry !== undefined && moves.aheadWanted(shard, entry.read);
  }

  /**
   * The claim of a shard loaded its rows, keeping `kept` (a read ahead) or
   * reading them afresh (null). A copy filed (or being filed) from any other
   * read is stale: the next pass drops it, then adopts the store's rows.
   * The caller asks moveShards.
   */
  aheadClaimed(shard: number, kept: object | null): void {
    const entry = this.ahead.get(shard);
    if (entry !== undefined && entry.read !== kept) this.lost.add(shard);
  }

  /** Shards filed ahead of their claim and not finished yet. */
  get aheadCount(): number {
    return this.ahead.size;
  }

  /** Whether the engine holds the shard's items (served, being adopted, or not yet dropped). */
  holds(shard: number): boolean {
    return this.held.has(shard);
  }

  /**
   * The node stopped serving a shard (given up, its lease ran out, a commit
   * of it failed). Whatever the engine holds of it is stale from now on,
   * even if the node claims it again before the next pass runs (a long
   * adoption may hold that pass back): the pass drops it, then adopts it
   * from the store's fresh copy. The caller asks moveShards.
   */
  shardLost(shard: number): void {
    if (this.held.has(shard)) this.lost.add(shard);
  }

  /**
   * Run a move's steps for at most adoptTurnMs per turn of the event loop (at
   * least one step per turn, whatever the clock says). A handover (freeze)
   * abandons it (undefined): the engine must change nothing more, and the node is leaving.
   */
  private async inSteps<T>(moves: ShardMoves, steps: Generator<unknown, T>): Promise<T | undefined> {
    for (;;) {
      if (this.frozen) return undefined;
      const startedMs = moves.stopwatchMs();
      let step = steps.next();
      while (step.done !== true && moves.stopwatchMs() - startedMs < clusterLimits.adoptTurnMs) step = steps.next();
      if (step.done === true) return step.value;
      await moves.turn();
    }
  }

  /** Refuse everything from now on (SIGTERM handover); parked dequeues are answered empty. */
  freeze(): void {
    this.frozen = true;
    this.inner.releaseWaiters();
  }

  set onEarlierDeadline(listener: (() => void) | null) {
    this.inner.onEarlierDeadline = listener;
  }

  get itemCount(): number {
    return this.inner.itemCount;
  }

  /** The dashboard's inspect queries (matching view, key lookup, oldest ready), always of the current Engine: this node's served shards only. */
  readonly inspector: EngineInspector = {
    matchingView: (ns, topic, nowMs) => this.inner.matchingView(ns, topic, nowMs),
    idByKey: (ns, topic, key) => this.inner.idByKey(ns, topic, key),
    readySinceMs: (ns, topics) => this.inner.readySinceMs(ns, topics),
  };

  enqueue(ns: string, items: EnqueueItemInput[], nowMs: number): Result<Reply<{ ids: string[] }>> {
    if (this.frozen) return { ok: false, failure: handingOver };
    for (const item of items) {
      const shard = this.placement.shardFor(ns, item);
      if (shard < 0) continue;
      const failure = this.router.route(shard);
      if (failure !== null) return { ok: false, failure };
    }
    return this.inner.enqueue(ns, items, nowMs);
  }

  dequeue(ns: string, input: DequeueInput, nowMs: number): DequeueOutcome {
    if (this.frozen) return { ok: false, failure: handingOver };
    return this.inner.dequeue(ns, input, nowMs);
  }

  cancelWaiters(owner: number): void {
    this.inner.cancelWaiters(owner);
  }

  releaseWaiters(): void {
    this.inner.releaseWaiters();
  }

  ack(ns: string, receipts: string[], nowMs: number, results: ReadonlyArray<Uint8Array | null> | null = null): AckOutcome {
    const failure = this.check(receipts);
    return failure !== null ? { ok: false, failure } : this.inner.ack(ns, receipts, nowMs, results);
  }

  nack(
    ns: string,
    items: Array<{ receipt: string; delayMs: number | null; metadata: Uint8Array | null }>,
    nowMs: number,
  ): Result<Reply<{ nacked: number; stale: string[] }>> {
    const failure = this.check(items.map((item) => item.receipt));
    return failure !== null ? { ok: false, failure } : this.inner.nack(ns, items, nowMs);
  }

  extend(ns: string, items: Array<{ receipt: string; leaseMs: number; metadata?: Uint8Array | null }>, nowMs: number): Result<Reply<{ extended: number; stale: string[] }>> {
    const failure = this.check(items.map((item) => item.receipt));
    return failure !== null ? { ok: false, failure } : this.inner.extend(ns, items, nowMs);
  }

  cancel(ns: string, ids: string[], nowMs: number): Result<Reply<{ cancelled: number; missing: string[] }>> {
    const failure = this.check(ids);
    return failure !== null ? { ok: false, failure } : this.inner.cancel(ns, ids, nowMs);
  }

  get(ns: string, ids: string[], nowMs: number): Result<{ items: Array<ItemState | EndedItemState | null> }> {
    const failure = this.check(ids);
    return failure !== null ? { ok: false, failure } : this.inner.get(ns, ids, nowMs);
  }

  /** Answered by the items' shard owner, as `get` is: ids of a shard served elsewhere are MOVED; parked waits are answered at a handover. */
  wait(ns: string, ids: string[], waitMs: number, owner: number, nowMs: number): WaitOutcome {
    if (this.frozen) return { ok: false, failure: handingOver };
    const failure = this.check(ids);
    return failure !== null ? { ok: false, failure } : this.inner.wait(ns, ids, waitMs, owner, nowMs);
  }

  topics(ns: string, query: { prefix: string | null; limit: number; after: string | null }): { topics: TopicCounts[]; next: string | null } {
    return this.inner.topics(ns, query);
  }

  dead(ns: string, topic: string, limit: number): { items: ItemState[] } {
    return this.inner.dead(ns, topic, limit);
  }

  redrive(ns: string, topic: string, ids: string[] | null, nowMs: number): Result<Reply<{ redriven: number }>> {
    const failure = this.check(ids ?? []);
    return failure !== null ? { ok: false, failure } : this.inner.redrive(ns, topic, ids, nowMs);
  }

  stats(namespaces: string[] | null, nowMs: number): EngineStats {
    return this.inner.stats(namespaces, nowMs);
  }

  /** This node's shards' items of the topic (the contract: `list` answers for the node's own shards). */
  list(ns: string, topic: string, query: ListQuery, nowMs: number): ListPage {
    return this.inner.list(ns, topic, query, nowMs);
  }

  /**
   * Pauses act on this node at once and are stored in the database, where
   * the other nodes poll them (ClusterNode.pollPausesAndPolicies, applyStoredPause).
   * Refused once the node hands its shards over (freeze): nothing may be
   * written after the drain that precedes the handover.
   */
  pause(ns: string, topic: string, forMs: number | null, nowMs: number, group: string | null = null): Result<Reply<{ pausedUntilMs: number | null }>> {
    if (this.frozen) return { ok: false, failure: handingOver };
    return this.inner.pause(ns, topic, forMs, nowMs, group);
  }

  resume(ns: string, topic: string, nowMs: number, group: string | null = null): Result<Reply<{ resumed: boolean }>> {
    if (this.frozen) return { ok: false, failure: handingOver };
    return this.inner.resume(ns, topic, nowMs, group);
  }

  /** A group's pause, shared with the other nodes as a topic's is. */
  pauseGroup(ns: string, topic: string, group: string, forMs: number | null, nowMs: number): Result<Reply<{ pausedUntilMs: number | null }>> {
    return this.pause(ns, topic, forMs, nowMs, group);
  }

  resumeGroup(ns: string, topic: string, group: string, nowMs: number): Result<Reply<{ resumed: boolean }>> {
    return this.resume(ns, topic, nowMs, group);
  }

  /**
   * Policies act on this node at once and are stored in the database, where
   * the other nodes poll them (ClusterNode.pollPausesAndPolicies, applyStoredPolicy);
   * refused once the node hands its shards over, as pauses are.
   */
  policy(ns: string, input: PolicyInput, nowMs: number): Result<Reply<{ policy: PolicyView } | { cleared: boolean }>> {
    if (this.frozen) return { ok: false, failure: handingOver };
    return this.inner.policy(ns, input, nowMs);
  }

  /**
   * Where a stored schedule of that name lives, read from the database: a
   * schedule whose item names a group lives on the group's shard, not its
   * name's, so `schedule` and `unschedule` ask here first and pass the answer on.
   */
  storedScheduleShard(ns: string, name: string): Promise<number | null> {
    return this.storedShard(ns, name);
  }

  /**
   * A schedule lives on its item's group's shard, or its name's without a
   * group (placement.ts); one stored already stays where it is (`stored`,
   * from storedScheduleShard): a replacement that would move it to another
   * shard is refused (BAD_REQUEST item.group: unschedule first), as it would
   * need two shards' fenced writes. MOVED or UNAVAILABLE when another node
   * serves the shard; refused once the node hands its shards over, as pauses are
   * (docs/decisions/033-schedules.md).
   */
  schedule(ns: string, input: ScheduleInput, nowMs: number, stored: number | null = null): Result<Reply<{ name: string; nextAtMs: number | null }>> {
    if (this.frozen) return { ok: false, failure: handingOver };
    const shard = this.placement.scheduleShard(ns, input.name, { topic: input.item.topic, group: input.item.group ?? null });
    if (stored !== null && stored !== shard) return scheduleMoveRefused(input.name);
    const failure = this.router.route(shard);
    return failure !== null ? { ok: false, failure } : this.inner.schedule(ns, input, nowMs);
  }

  /** Answered by the owner of the shard the schedule is stored on (`stored`), else of its name's. */
  unschedule(ns: string, name: string, nowMs: number, stored: number | null = null): Result<Reply<{ removed: boolean }>> {
    if (this.frozen) return { ok: false, failure: handingOver };
    const failure = this.router.route(stored ?? this.placement.scheduleShard(ns, name, { topic: "", group: null }));
    return failure !== null ? { ok: false, failure } : this.inner.unschedule(ns, name, nowMs);
  }

  /** The schedules of this node's shards. */
  scheduleList(ns: string, query: { limit: number; after: string | null }): { schedules: ScheduleView[]; next: string | null } {
    return this.inner.scheduleList(ns, query);
  }

  /**
   * Every node's schedules, read from the database as committed, so any
   * node answers `schedules` for the whole cluster; those of this node's
   * shards show the engine's own view (its armed next tick, a last tick not
   * committed yet), the others their next tick as their owner arms it.
   */
  async scheduleListAll(ns: string, query: { limit: number; after: string | null }, nowMs: number): Promise<{ schedules: ScheduleView[]; next: string | null }> {
    const records = await this.storedSchedules(ns, query.after, query.limit + 1);
    const page = records.slice(0, query.limit);
    const schedules = page.map((record) => this.inner.scheduleView(ns, record.name) ?? viewOfRecord(record, nowMs));
    return { schedules, next: records.length > page.length ? (page[page.length - 1]?.name ?? null) : null };
  }

  /** The topic's policies as this node holds them (every node holds the same, within a poll). */
  policies(ns: string, topic: string, query: { limit: number; after: string | null }): { policies: PolicyView[]; next: string | null } {
    return this.inner.policies(ns, topic, query);
  }

  /** The groups of this node's shards' items of the topic (a group's items all live on one shard). */
  groups(ns: string, topic: string, query: { limit: number; after: string | null }): { groups: GroupCounts[]; next: string | null } {
    return this.inner.groups(ns, topic, query);
  }

  /** Ids on shards this node does not serve are answered MOVED or UNAVAILABLE (nothing explained), as `get` answers them. */
  explain(ns: string, ids: string[], nowMs: number): Result<{ items: Array<ExplainedItem | null> }> {
    const failure = this.check(ids);
    return failure !== null ? { ok: false, failure } : this.inner.explain(ns, ids, nowMs);
  }

  /** Cluster mode writes every lease before its delivery, so nothing is deferred; kept for the interface. */
  flushDeferredWrites(): void {
    this.inner.flushDeferredWrites();
  }

  /** `after` ids on other nodes' shards the engine waits on (none once the node hands its shards over). */
  remoteWaitedOn(elsewhere: (id: string) => boolean, max: number): string[] {
    return this.frozen ? [] : this.inner.remoteWaitedOn(elsewhere, max);
  }

  /** Such a dependency ended (ignored once the node hands its shards over). */
  remoteDependencyEnded(id: string, how: RemoteEnd, nowMs: number): void {
    if (!this.frozen) this.inner.remoteDependencyEnded(id, how, nowMs);
  }

  /** A topic's (group null) or group's pause in this node's engine (undefined: not paused). */
  pausedUntil(ns: string, topic: string, group: string | null = null): number | null | undefined {
    return this.inner.pausedUntil(ns, topic, group);
  }

  /** Whether this node's own write of a topic's or group's pause is still on its way to the database. */
  pauseWriting(ns: string, topic: string, group: string | null = null): boolean {
    return this.inner.pauseWriting(ns, topic, group);
  }

  /** Another node committed a pause or resume (not once the node hands its shards over). */
  applyStoredPause(ns: string, topic: string, group: string | null, untilMs: number | null | undefined, nowMs: number): void {
    if (!this.frozen) this.inner.applyStoredPause(ns, topic, group, untilMs, nowMs);
  }

  /** The policy this node's engine holds for the scope (group null: the topic's own; "*": the default), or null. */
  storedPolicy(ns: string, topic: string, group: string | null): PolicyRecord | null {
    return this.inner.storedPolicy(ns, topic, group);
  }

  /** Whether this node's own write of the scope's policy is still on its way to the database. */
  policyWriting(ns: string, topic: string, group: string | null): boolean {
    return this.inner.policyWriting(ns, topic, group);
  }

  /** Another node committed a policy or its clear (null); not once the node hands its shards over. */
  applyStoredPolicy(ns: string, topic: string, group: string | null, record: PolicyRecord | null, nowMs: number): void {
    if (!this.frozen) this.inner.applyStoredPolicy(ns, topic, group, record, nowMs);
  }

  /** The topic's leased items on a shard, for the node's slot hand-backs (topic-bound-leases.ts); null once the node hands its shards over. */
  sharedLeased(ns: string, topic: string, shard: number): number | null {
    return this.frozen ? null : this.inner.sharedLeased(ns, topic, shard);
  }

  /** The node drew tokens or slots of the topic's shared bounds (ignored once the node hands its shards over). */
  sharedBoundReleased(ns: string, topic: string, nowMs: number): void {
    if (!this.frozen) this.inner.sharedBoundReleased(ns, topic, nowMs);
  }

  /** Not once the node hands its shards over: nothing may be written after the drain that precedes the handover. */
  tick(nowMs: number): void {
    if (!this.frozen) this.inner.tick(nowMs);
  }

  nextDeadlineMs(): number | null {
    return this.frozen ? null : this.inner.nextDeadlineMs();
  }

  /** The first id or receipt on a shard this node does not serve, as shard_elsewhere or shard_unserved; null when all are served. */
  private check(texts: readonly string[]): Failure | null {
    if (this.frozen) return handingOver;
    for (const text of texts) {
      const shard = shardPrefix(text);
      if (shard < 0 || shard >= this.shardCount) continue;
      const failure = this.router.route(shard);
      if (failure !== null) return failure;
    }
    return null;
  }
}
