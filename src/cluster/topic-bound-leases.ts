// A node's share of topics' own max_leased and rate (docs/CLUSTER.md,
// "Topic bounds across nodes"): per (ns, topic), the rate tokens it drew
// from the cluster's bucket and, per shard it serves, the slots that shard
// holds of the topic's max_leased (rows: storage/postgres/topic-bound-rows.ts;
// the engine's side: engine/groups/shared-topic-gate.ts). It belongs to
// the node, not to a shard, so a shard's move neither refills nor forgets it.
//
// Rate: a TokenLease per topic (token-lease.ts), as a namespace quota, but
// holding nothing while unused: drawn ahead from the node's recent use every
// period, at once when a dequeue finds none, handed back above the target.
//
// max_leased: a shard's slots are the database's (orq_shard_slots), read
// when the node adopts the shard and changed only by this node's moves,
// fenced by the shard's ownership. At most one move per (topic, shard) is in
// flight. A dequeue that finds an item it may take on a shard whose slots
// are all leased draws there at once (slotsShort): up to the leased count
// plus what it wanted. A draw that came back short is not repeated until
// the next period, which, while dequeues still want the topic, wakes them
// so they ask again. A shard with neither a delivery nor a short dequeue in
// the last period is idle: its unused slots (slots - leased there) go back
// to free, after every commit begun so far has landed (so an ack's end of a
// lease is in the database before the slot it freed leaves the shard).
// Slots handed back leave the node's count before the statement is sent;
// every answer sets the count to the database's, so a failed or lost move
// leaves the node holding fewer slots than the database says, never more,
// and the next period reads the database's count (a move of 0).

import type { SharedTopicBound, SharedTopicBounds } from "../engine/groups/shared-topic-bound.ts";
import { assert } from "../lib/assert.ts";
import type { Clock } from "../lib/clock.ts";
import { clusterLimits } from "../limits.ts";
import type { PolicyRecord } from "../storage/record.ts";
import type { QuotaGrant } from "../storage/postgres/quota-rows.ts";
import type { RateDraw, SlotMove, SlotMoveResult } from "../storage/postgres/topic-bound-rows.ts";
import { TokenLease } from "./token-lease.ts";

const { quotaDrawPeriodMs, quotaDrawTimeoutMs } = clusterLimits;

/** The database side (topic-bound-rows.ts over the node's connection; a model in tests). */
export interface TopicBoundRows {
  drawRate(draw: RateDraw): Promise<QuotaGrant>;
  moveSlots(move: SlotMove): Promise<SlotMoveResult>;
  shardSlots(shard: number): Promise<Array<{ ns: string; topic: string; slots: number }>>;
}

/** What the leases ask the node they belong to. */
export interface TopicBoundHost {
  /** This node's id, as orq_shards.owner names it. */
  nodeId(): string;
  /** The epoch this node holds the shard at, or null (the ownership's fence). */
  heldEpoch(shard: number): number | null;
  /** The shard's moves found it claimed by another node. */
  lost(shard: number, detail: string): void;
  /** The topic's leased items on the shard, or null while the engine does not serve the shard's items (loading, dropping). */
  leased(ns: string, topic: string, shard: number): number | null;
  /** The topic's own policy as the engine holds it, or null. */
  policy(ns: string, topic: string): PolicyRecord | null;
  /** Tokens or slots came: the topic's parked dequeues look again. */
  released(ns: string, topic: string): void;
  /** Resolves when every commit begun so far has landed. */
  drain(): Promise<void>;
}

/** One (topic, shard)'s slot moves. */
class ShardSlots {
  /** The move in flight: its number (a later answer to an earlier number is ignored) and when it went (null: none). */
  seq = 0;
  sentMs: number | null = null;
  /** Last delivery on the shard, and last dequeue that wanted a slot there (this node's clock). */
  usedAtMs = Number.NEGATIVE_INFINITY;
  demandAtMs = Number.NEGATIVE_INFINITY;
  /** A draw came back short in this period (no more draws until the next), and since then none was granted in full. */
  shortThisPeriod = false;
  starved = false;
  /** Why the last move failed, or null. */
  failure: string | null = null;
  /** A move failed or went unanswered: what the database holds is unknown, so the next period reads it (a move of 0). */
  resync = false;
}

/** One topic's share on this node. */
class TopicBoundLease implements SharedTopicBound {
  retired = false;
  /** Tokens of the topic's own rate (null: no rate binds it, or none asked yet). */
  rate: TokenLease | null = null;
  /** Slots held per shard, as the database had them at the last answer (less any handed back since). */
  readonly held: Int32Array;
  private readonly shards: ShardSlots[];

  constructor(
    readonly ns: string,
    readonly topic: string,
    shardCount: number,
    private readonly owner: TopicBoundLeases,
  ) {
    this.held = new Int32Array(shardCount);
    this.shards = Array.from({ length: shardCount }, () => new ShardSlots());
  }

  rateHeld(count: number, perMs: number): number {
    let rate = this.rate;
    if (rate === null) {
      const { ns, topic, owner } = this;
      // A draw carries the rate the lease has then (a policy change resizes it), and the database's row takes it.
      const lease: TokenLease = new TokenLease(
        (want) => owner.rows.drawRate({ ns, topic, count: lease.capacity, perMs: lease.perMs, want }),
        owner.clock,
        { capacity: count, perMs, idleFloor: false, drawAfterShort: false, onGranted: () => owner.host.released(ns, topic) },
      );
      rate = lease;
      this.rate = lease;
    } else if (rate.capacity !== count || rate.perMs !== perMs) {
      rate.resize(count, perMs);
    }
    return rate.held;
  }

  rateShort(wanted: number, nowMs: number): void {
    this.rate?.tryTake(wanted, nowMs);
  }

  takeToken(nowMs: number): void {
    // The gate saw a token held (rateHeld) in the same turn.
    assert(this.rate?.tryTake(1, nowMs) === true, `topic ${this.topic}: a token taken that was not held`);
  }

  slots(shard: number): number {
    return this.held[shard] as number;
  }

  slotUsed(shard: number, nowMs: number): void {
    (this.shards[shard] as ShardSlots).usedAtMs = nowMs;
  }

  slotsShort(shard: number, wanted: number, leased: number, maxLeased: number, nowMs: number): void {
    const state = this.shards[shard] as ShardSlots;
    state.demandAtMs = nowMs;
    if (state.sentMs !== null || state.shortThisPeriod) return;
    const want = Math.min(maxLeased, leased + wanted) - (this.held[shard] as number);
    if (want > 0) this.move(shard, want, maxLeased, nowMs);
  }

  /** Whether this entry holds nothing and nothing is on its way: it may be dropped. */
  get empty(): boolean {
    if (this.rate !== null) return false;
    for (let shard = 0; shard < this.held.length; shard++) {
      if (this.held[shard] !== 0 || (this.shards[shard] as ShardSlots).sentMs !== null) return false;
    }
    return true;
  }

  /** The node adopted the shard: these are its slots (read after the claim, so no earlier move can land after). */
  adopt(shard: number, slots: number): void {
    this.forget(shard);
    this.held[shard] = slots;
  }

  /** The shard left the node: its slots went with it, and any move's answer is ignored. */
  forget(shard: number): void {
    const state = this.shards[shard] as ShardSlots;
    state.seq++;
    state.sentMs = null;
    state.usedAtMs = Number.NEGATIVE_INFINITY;
    state.demandAtMs = Number.NEGATIVE_INFINITY;
    state.shortThisPeriod = false;
    state.starved = false;
    state.resync = false;
    this.held[shard] = 0;
  }

  /**
   * One period: follow the policy (a rate that went hands its tokens back;
   * with no max_leased every unused slot goes back, busy or not), hand back
   * idle shards' unused slots, give up moves unanswered too long, and wake
   * the topic's dequeues while a short draw left them wanting. The
   * hand-backs are returned, to be sent once the commits begun so far have
   * landed. Slots that cover leased items stay, even when the bound went:
   * the node may not know yet of a max_leased set elsewhere.
   */
  period(policy: PolicyRecord | null, nowMs: number): Array<() => void> {
    const rate = policy?.rate ?? null;
    if (rate === null && this.rate !== null) {
      void this.rate.returnAll(nowMs);
      this.rate = null;
    } else if (rate !== null && this.rate !== null) {
      if (this.rate.capacity !== rate.count || this.rate.perMs !== rate.perMs) this.rate.resize(rate.count, rate.perMs);
      void this.rate.period(nowMs);
    }
    const max = policy?.maxLeased ?? null;
    const sends: Array<() => void> = [];
    let wake = false;
    for (let shard = 0; shard < this.held.length; shard++) {
      const state = this.shards[shard] as ShardSlots;
      if (state.sentMs !== null && nowMs - state.sentMs >= quotaDrawTimeoutMs) {
        state.seq++;
        state.sentMs = null;
        state.failure = `no answer from the database in ${quotaDrawTimeoutMs} ms`;
        state.resync = true;
      }
      state.shortThisPeriod = false;
      if (state.starved) {
        // Dequeues that wanted a slot here lately are woken to ask again (and draw); once they stopped asking, nothing is owed.
        if (max !== null && nowMs - state.demandAtMs <= 2 * quotaDrawPeriodMs) wake = true;
        else state.starved = false;
      }
      if (state.sentMs !== null || this.owner.host.heldEpoch(shard) === null) continue;
      if (state.resync) {
        // Learn what the shard holds before anything else moves (a failed hand-back may have left slots there).
        this.move(shard, 0, max ?? 0, nowMs);
        continue;
      }
      const held = this.held[shard] as number;
      if (held === 0) continue;
      const idle = max === null || nowMs - Math.max(state.usedAtMs, state.demandAtMs) >= quotaDrawPeriodMs;
      if (!idle) continue;
      const leased = this.owner.host.leased(this.ns, this.topic, shard);
      if (leased !== null && held > leased) sends.push(this.handBack(shard, held - leased, max ?? 0, nowMs));
    }
    if (wake) this.owner.host.released(this.ns, this.topic);
    return sends;
  }

  /** Take `count` slots off the shard now; the returned send moves them back to free. */
  private handBack(shard: number, count: number, maxLeased: number, nowMs: number): () => void {
    this.held[shard] = (this.held[shard] as number) - count;
    const state = this.shards[shard] as ShardSlots;
    // Marked as sent now: no draw of this shard goes out before the hand-back.
    const seq = ++state.seq;
    state.sentMs = nowMs;
    return () => {
      if (state.seq === seq) this.send(shard, -count, maxLeased, seq);
    };
  }

  private move(shard: number, want: number, maxLeased: number, nowMs: number): void {
    const state = this.shards[shard] as ShardSlots;
    const seq = ++state.seq;
    state.sentMs = nowMs;
    this.send(shard, want, maxLeased, seq);
  }

  private send(shard: number, want: number, maxLeased: number, seq: number): void {
    const state = this.shards[shard] as ShardSlots;
    const epoch = this.owner.host.heldEpoch(shard);
    if (epoch === null) {
      state.sentMs = null;
      return;
    }
    const { ns, topic } = this;
    this.owner.rows.moveSlots({ ns, topic, shard, nodeId: this.owner.host.nodeId(), epoch, want, maxLeased }).then(
      (result) => {
        if (state.seq !== seq) return;
        state.sentMs = null;
        if (result.fenced) {
          this.owner.host.lost(shard, result.detail);
          return;
        }
        state.failure = null;
        state.resync = false;
        this.held[shard] = result.slots;
        if (want > 0) {
          state.shortThisPeriod = result.granted < want;
          state.starved = result.granted < want;
        }
        if (result.granted > 0) this.owner.host.released(ns, topic);
      },
      (error: unknown) => {
        if (state.seq !== seq) return;
        state.sentMs = null;
        state.failure = (error as Error).message;
        state.resync = true;
        if (want > 0) {
          state.shortThisPeriod = true;
          state.starved = true;
        }
      },
    );
  }
}

/** The node's entries, one per topic whose own bounds it met (a dequeue asked, or an adopted shard held slots of it). */
export class TopicBoundLeases implements SharedTopicBounds {
  private readonly entries = new Map<string, TopicBoundLease>();
  /** Set by the node once it has an engine and an ownership to answer for. */
  host: TopicBoundHost;

  constructor(
    private readonly shardCount: number,
    readonly rows: TopicBoundRows,
    readonly clock: Clock,
    host: TopicBoundHost,
  ) {
    this.host = host;
  }

  get size(): number {
    return this.entries.size;
  }

  of(ns: string, topic: string): TopicBoundLease {
    const key = `${ns}\u0000${topic}`;
    let entry = this.entries.get(key);
    if (entry === undefined) {
      entry = new TopicBoundLease(ns, topic, this.shardCount, this);
      this.entries.set(key, entry);
    }
    return entry;
  }

  /** Read the slots a shard holds, once this node's claim of it went through (before it is served). */
  async adoptShard(shard: number): Promise<void> {
    const rows = await this.rows.shardSlots(shard);
    for (const entry of this.entries.values()) entry.forget(shard);
    for (const { ns, topic, slots } of rows) this.of(ns, topic).adopt(shard, slots);
  }

  /** The shard left this node. */
  dropShard(shard: number): void {
    for (const entry of this.entries.values()) entry.forget(shard);
  }

  /**
   * One period of every entry; hand-backs go once the commits begun so far
   * have landed. Entries that hold nothing and whose topic has no own bound
   * are dropped (a topic that still caches one asks for a new one).
   */
  async period(nowMs: number): Promise<void> {
    const sends: Array<() => void> = [];
    for (const [key, entry] of this.entries) {
      const policy = this.host.policy(entry.ns, entry.topic);
      sends.push(...entry.period(policy, nowMs));
      const binds = policy !== null && (policy.maxLeased !== null || policy.rate !== null);
      if (!binds && entry.empty) {
        entry.retired = true;
        this.entries.delete(key);
      }
    }
    if (sends.length === 0) return;
    await this.host.drain();
    for (const send of sends) send();
  }

  /** Hand every rate token back (SIGTERM). Slots stay with their shards: the next owner inherits them. */
  async returnAll(nowMs: number): Promise<void> {
    await Promise.all([...this.entries.values()].map((entry) => entry.rate?.returnAll(nowMs)));
  }
}
