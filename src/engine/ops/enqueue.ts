// enqueue: validate a batch as a whole, answer idempotency keys, pick one
// healthy shard for the new items (in cluster mode, a keyed or `after` item
// goes where the ShardPlacement says instead), charge the namespace quota, and store the
// items. A new item becomes takeable only once its enqueue commit is durable
// (activate); if that commit fails it leaves memory as if never enqueued
// (rollback), so nothing undurable is ever delivered.

import { topicKeyOf } from "../groups/group-key.ts";
import { assert } from "../../lib/assert.ts";
import type { WriteSet } from "../../storage/writer.ts";
import type { EnqueueItemInput, Reply, Result } from "../api.ts";
import { enqueueRefusal } from "../admission/capacity.ts";
import { type AfterClassification, classifyAfter, type DependencyStatus } from "../state/dependencies.ts";
import { completeRecord } from "./enqueue-item.ts";
import { atBatch, atItem } from "../failures/failure-location.ts";
import { fail, type FailureResult, storageUnavailable } from "../failures/failures.ts";
import { formatId } from "../state/ids.ts";
import type { LiveItem } from "../state/item.ts";
import type { UnstoredBytes } from "../state/item-parts.ts";
import type { ItemStates } from "../state/item-states.ts";
import { type Preference, type Requires, signatureRegistryFull } from "../matching/index.ts";
import { FrozenParses } from "../matching/frozen-parses.ts";
import { wholeMap } from "../matching/types.ts";
import type { Namespace } from "../state/namespace.ts";
import type { OpContext } from "./op-context.ts";
import { chooseWritableShard } from "../admission/writable-shards.ts";

/** Cluster mode: the shard an item must live on (its key's or its first `after` id's), or -1 for any healthy one. */
export interface ShardPlacement {
  shardFor(ns: string, input: EnqueueItemInput): number;
  /** Whether an id lives on a shard this node does not serve: unknown here, it counts as live (remote-dependencies.ts). */
  elsewhere(id: string): boolean;
  /** The shard a schedule belongs to (its item's group's, when it names one), where its ticks' items live too. */
  scheduleShard(ns: string, name: string, item: ScheduleItemPlace): number;
}

/** What of a schedule's item decides where the schedule lives: its topic and group (null: the nil group). */
export interface ScheduleItemPlace {
  topic: string;
  group: string | null;
}

/**
 * A schedule's tick (schedules/schedules.ts): its one item goes to `shard`
 * (-1: any healthy one, as an unplaced item), and `write` adds the schedule's
 * record to the item's own write set, so the tick and its item commit together.
 */
export interface TickPlacement {
  shard: number;
  write(set: WriteSet, ids: readonly string[]): void;
}

/** Retry hint when the signature registry is full (1 s): signatures free up as items with rare requires end. */
const signaturesFullRetryAfterMs = 1000;

export class Enqueuer {
  /** Enqueues whose commit failed and were rolled out of memory (stats). */
  rollbacks = 0;
  /** The shard new items go to until the next commit starts (chooseShard). */
  private nextShard = 0;
  /** Which commit `nextShard` was chosen for: the writer's commits started, counted from its commitGeneration. */
  private shardForCommit = 0;
  private readonly states: ItemStates;
  // The batch under way's side results, kept here between its steps rather
  // than in an object per batch, and dropped when it ends (forgetBatch).
  /** Each item's parsed requires, when some item has one. */
  private requires: Array<Requires | null> | null = null;
  /** Each item's preference (parsed `prefers` and its wait), when some item has one. */
  private preferences: Array<Preference | null> | null = null;
  /** Parses of repeated `requires` and `prefers` maps, kept (matching/frozen-parses.ts). */
  private readonly parses: FrozenParses;
  /** Each item's `after` classification, when some item has one. */
  private after: Array<AfterClassification | null> | null = null;
  /** Commits of live items the batch's keys matched: its reply waits for them too. */
  private waitOn: Promise<void>[] | null = null;

  constructor(
    private readonly ctx: OpContext,
    /** The latest nowMs the engine has seen, for work done when a commit lands (outside any op). */
    private readonly latestNowMs: () => number,
    private readonly placement: ShardPlacement | null = null,
  ) {
    this.states = ctx.states;
    this.parses = new FrozenParses(ctx.states.limits);
  }

  /** Run by Engine.enqueue once due deadlines are handled. */
  enqueue(nsName: string, inputs: EnqueueItemInput[], nowMs: number, tick: TickPlacement | null = null): Result<Reply<{ ids: string[] }>> {
    // Nothing of an earlier batch is left over, even one a thrown bug cut short.
    this.forgetBatch(null);
    const invalid = this.checkItems(nsName, inputs);
    if (invalid !== null) return invalid;
    const count = inputs.length;
    const ids: string[] = new Array<string>(count);
    const sameAs: number[] = new Array<number>(count).fill(-1);
    const fresh = this.matchKeys(nsName, inputs, ids, sameAs);
    // The live-item, topic and namespace maxima, before anything changes (admission/capacity.ts).
    const refused = enqueueRefusal(this.states, nsName, inputs, (i) => sameAs[i] === -1 && ids[i] === undefined, fresh);
    if (refused !== null) return this.forgetBatch(refused);

    const signatures: number[] = new Array<number>(count).fill(0);
    const full = this.internSignatures(sameAs, ids, signatures);
    if (full !== null) return this.forgetBatch(full, signatures);
    const placed = this.placement === null && (tick === null || tick.shard < 0) ? null : this.place(nsName, inputs, sameAs, ids, nowMs, tick);
    if (placed !== null && !Array.isArray(placed)) {
      return this.forgetBatch(storageUnavailable(placed.retryAfterMs, `shard ${placed.shard} is not accepting writes`), signatures);
    }
    const shard = fresh > 0 && (placed === null || placed.includes(-1)) ? this.chooseShard(nowMs) : -1;
    if (typeof shard !== "number") return this.forgetBatch(shard, signatures);
    const ns = this.states.namespace(nsName, nowMs);
    const overQuota = fresh > 0 ? this.chargeQuota(ns, nsName, fresh, nowMs) : null;
    if (overQuota !== null) return this.forgetBatch(overQuota, signatures);

    const set = this.states.ws();
    const created: LiveItem[] = [];
    for (let i = 0; i < count; i++) {
      if (sameAs[i] !== -1 || ids[i] !== undefined) continue;
      const itemShard = placed === null || placed[i] === -1 ? shard : (placed[i] as number);
      created.push(this.createItem(ns, nsName, inputs[i] as EnqueueItemInput, i, itemShard, signatures[i] as number, set, ids, nowMs));
    }
    for (let i = 0; i < count; i++) if (sameAs[i] !== -1) ids[i] = ids[sameAs[i] as number] as string;
    return this.commitBatch(created, ids, nowMs, tick);
  }

  /**
   * The meaning checks of every item, in batch order (its requires, then its
   * `after` ids): the first failure, or null with the per-item side results in
   * this.requires / this.after (made only when some item has one: most
   * batches have no requires and no `after`).
   */
  private checkItems(nsName: string, inputs: EnqueueItemInput[]): FailureResult | null {
    const count = inputs.length;
    let lookup: ((id: string) => DependencyStatus) | null = null;
    for (let i = 0; i < count; i++) {
      const input = inputs[i] as EnqueueItemInput;
      if (input.requires !== null) {
        const r = this.parses.requiresOf(input.requires);
        if (!r.ok) return this.forgetBatch(fail(r.kind, r.message, { at: atItem(i, { of: "requires", at: r.at }) }));
        this.requires ??= new Array<Requires | null>(count).fill(null);
        this.requires[i] = r.value;
      }
      const prefers = input.prefers ?? null;
      if (prefers !== null) {
        const p = this.parses.preferenceOf(prefers, input.preferWaitMs ?? 0);
        if (!p.ok) return this.forgetBatch(fail(p.kind, p.message, { at: atItem(i, { of: "prefers", at: p.at }) }));
        this.preferences ??= new Array<Preference | null>(count).fill(null);
        this.preferences[i] = p.value;
      }
      if (input.after === null) continue;
      lookup ??= this.dependencyLookup(nsName);
      const c = classifyAfter(input.after, lookup, this.states.limits.afterIdsMax);
      if (c.kind === "not_found") {
        const id = input.after[c.index];
        return this.forgetBatch(fail("unknown_dependency", `after id ${JSON.stringify(id)} is not known in this namespace`, { at: atItem(i, { of: "after", position: c.index }) }));
      }
      if (c.kind === "too_large") {
        return this.forgetBatch(fail("over_limit", `after lists more than ${this.states.limits.afterIdsMax} ids`, { at: atItem(i, { of: "after", position: null }) }));
      }
      this.after ??= new Array<AfterClassification | null>(count).fill(null);
      this.after[i] = c;
    }
    return null;
  }

  /**
   * Idempotency: an item whose key a live item holds gets that item's id in
   * `ids` (and the batch waits for its commit: this.waitOn); a repeat of an
   * earlier item's key in this batch gets that item's index in `sameAs`. The
   * count of the others, which are new.
   */
  private matchKeys(nsName: string, inputs: EnqueueItemInput[], ids: string[], sameAs: number[]): number {
    const existingNs = this.states.namespaces.get(nsName);
    let batchKeys: Map<string, Map<string, number>> | null = null;
    let fresh = 0;
    for (let i = 0; i < inputs.length; i++) {
      const input = inputs[i] as EnqueueItemInput;
      if (input.key !== null) {
        const topicKey = topicKeyOf(input.group ?? null, input.key);
        const existing = existingNs?.topics.get(input.topic)?.keys.get(topicKey);
        if (existing !== undefined) {
          ids[i] = existing.id;
          if (existing.commit !== null) (this.waitOn ??= []).push(existing.commit);
          continue;
        }
        batchKeys ??= new Map();
        let byKey = batchKeys.get(input.topic);
        if (byKey === undefined) {
          byKey = new Map();
          batchKeys.set(input.topic, byKey);
        }
        const first = byKey.get(topicKey);
        if (first !== undefined) {
          sameAs[i] = first;
          continue;
        }
        byKey.set(topicKey, i);
      }
      fresh++;
    }
    return fresh;
  }

  /** Each new item's requires signature into `signatures` (a reference each); a failure when the registry is full. */
  private internSignatures(sameAs: number[], ids: string[], signatures: number[]): FailureResult | null {
    const requires = this.requires;
    const preferences = this.preferences;
    for (let i = 0; i < signatures.length; i++) {
      if (sameAs[i] !== -1 || ids[i] !== undefined) continue;
      const sig = this.states.internSignature(requires === null ? null : (requires[i] as Requires | null), preferences === null ? null : (preferences[i] as Preference | null));
      if (sig === signatureRegistryFull) {
        return fail("server_full", "too many distinct requires signatures are live", {
          at: atItem(i, { of: "requires", at: wholeMap }),
          retryAfterMs: signaturesFullRetryAfterMs,
        });
      }
      signatures[i] = sig;
    }
    return null;
  }

  /**
   * The healthy shard the batch's unplaced new items go to, or why none takes
   * writes. Round robin by commit, not by batch: every batch that joins one
   * commit goes to one shard, the next commit's to the next. Why: a commit
   * rewrites the B-tree pages it touches in every shard it writes, and items
   * enqueued together are taken and acked together, so their later writes
   * (lease, sweep) also stay within few shards. Spread by batch, a FIFO load
   * at 20,000 items/s touches all 16 shards in every commit
   * (docs/decisions/018-one-shard-per-commit.md).
   */
  private chooseShard(nowMs: number): number | FailureResult {
    // commitGeneration is odd while a commit is in flight; writes made then and
    // in the idle moment after it lands go to the same next commit.
    const commit = Math.ceil(this.ctx.writer.commitGeneration / 2);
    if (commit !== this.shardForCommit) {
      this.shardForCommit = commit;
      this.nextShard = (this.nextShard + 1) % this.ctx.writer.shardCount;
    }
    const chosen = chooseWritableShard(this.ctx.writer, this.ctx.writer.shardCount, this.nextShard, nowMs);
    if (chosen.shard < 0) return storageUnavailable(chosen.retryAfterMs, chosen.reason);
    this.nextShard = chosen.shard;
    return chosen.shard;
  }

  /** Take `fresh` items from the namespace's enqueue quota, or say why not. */
  private chargeQuota(ns: Namespace, nsName: string, fresh: number, nowMs: number): FailureResult | null {
    if (ns.bucket === null) return null;
    const verdict = ns.bucket.take(fresh, nowMs);
    if (verdict.ok) return null;
    if (verdict.refusal === "too_large") {
      return fail("over_limit", `batch of ${fresh} new items exceeds the namespace quota of ${ns.bucket.perMinute} items per minute`, { at: atBatch });
    }
    if (verdict.refusal === "unavailable") return fail("quota_unreachable", verdict.message ?? "the namespace quota cannot be checked", { retryAfterMs: verdict.retryAfterMs });
    return fail("rate_limited", `namespace ${JSON.stringify(nsName)} is over its enqueue quota`, { retryAfterMs: verdict.retryAfterMs });
  }

  /**
   * Item `index` of the batch, new, on `shard`: in memory, in its topic, its
   * deadlines and dependencies, and in `set`; its id into `ids` (formatted
   * once here: LiveItem.id would format it again).
   */
  private createItem(ns: Namespace, nsName: string, input: EnqueueItemInput, index: number, shard: number, sig: number, set: WriteSet, ids: string[], nowMs: number): LiveItem {
    const key = this.ctx.writer.nextKey();
    const id = formatId(shard, key);
    // The record is also what the item holds until its commit (UnstoredBytes: its payload, metadata and commit).
    const record = completeRecord(input, nsName, nowMs);
    const c = this.after === null ? null : (this.after[index] as AfterClassification | null);
    const deadReason = c?.kind === "dead" ? c.deadReason : null;
    const item = this.states.admit(shard, key, id, ns.topic(input.topic), sig, record, c?.kind === "waiting" ? c.unmet : null, deadReason, nowMs);
    if (deadReason !== null) {
      record.state = "dead";
      record.deadReason = deadReason;
    }
    // The record itself is the write: the item copied what it keeps, so nothing changes it later.
    set.putItem(shard, key, record);
    ns.counters.enqueued++;
    ids[index] = id;
    return item;
  }

  /** End the batch's write set: its new items become takeable once it is durable (or leave memory if it fails). */
  private commitBatch(created: LiveItem[], ids: string[], nowMs: number, tick: TickPlacement | null): Result<Reply<{ ids: string[] }>> {
    const waitOn = this.waitOn;
    this.forgetBatch(null);
    if (tick !== null) tick.write(this.states.ws(), ids);
    const end = this.states.closeSet()!.promise();
    if (created.length > 0) {
      for (const item of created) (item.unstored as UnstoredBytes).commit = end;
      end.then(
        () => this.activate(created),
        () => this.rollback(created),
      );
    }
    const durable = waitOn === null ? end : Promise.all([end, ...waitOn]).then(() => undefined);
    this.ctx.wake(nowMs);
    return { ok: true, value: { value: { ids }, durable } };
  }

  /**
   * Drop the batch's side results (this.requires, this.after, this.waitOn)
   * and give back the signature references it took (0 entries are no-ops);
   * `failure` passes through, so a refusal reads `return this.forgetBatch(f)`.
   */
  private forgetBatch<F extends FailureResult | null>(failure: F, signatures: number[] | null = null): F {
    this.requires = null;
    this.preferences = null;
    this.after = null;
    this.waitOn = null;
    if (signatures !== null) for (const sig of signatures) this.states.releaseSignature(sig);
    return failure;
  }

  /** Whether an `after` id is live, ended or unknown in namespace `nsName` (in cluster mode, an id on a shard served elsewhere counts as live). */
  private dependencyLookup(nsName: string): (id: string) => DependencyStatus {
    const placement = this.placement;
    if (placement === null) return (id: string) => this.states.dependencyStatus(nsName, id);
    return (id: string) => {
      const status = this.states.dependencyStatus(nsName, id);
      return status === "unknown" && placement.elsewhere(id) ? "live" : status;
    };
  }

  /** The enqueue's commit is durable: its ready items become takeable. */
  private activate(created: LiveItem[]): void {
    for (const item of created) {
      if (!this.states.items.holds(item)) continue;
      this.states.stored(item, this.latestNowMs());
    }
    this.ctx.wake(this.latestNowMs());
  }

  /** The enqueue's commit failed: its items leave memory as if never enqueued (they were never takeable). */
  private rollback(created: LiveItem[]): void {
    assert(!this.states.setOpen, "engine: rollback inside an op");
    this.rollbacks++;
    for (const item of created) {
      if (!this.states.items.holds(item)) continue;
      this.states.discard(item);
      // Items enqueued meanwhile with this id in `after` cannot wait for it any more.
      this.states.killDependents(item.id, "cancelled");
    }
    this.states.endSetBackground();
  }

  /** Cluster mode: each fresh item's required shard (-1: any), or the first required shard that refuses writes. */
  private place(nsName: string, inputs: EnqueueItemInput[], sameAs: number[], ids: string[], nowMs: number, tick: TickPlacement | null): number[] | { shard: number; retryAfterMs: number } {
    const shards: number[] = new Array<number>(inputs.length).fill(-1);
    for (let i = 0; i < inputs.length; i++) {
      if (sameAs[i] !== -1 || ids[i] !== undefined) continue;
      const shard = tick !== null && tick.shard >= 0 ? tick.shard : (this.placement?.shardFor(nsName, inputs[i] as EnqueueItemInput) ?? -1);
      if (shard < 0) continue;
      const availability = this.ctx.writer.writable(shard, nowMs);
      if (!availability.available) return { shard, retryAfterMs: availability.retryAfterMs };
      shards[i] = shard;
    }
    return shards;
  }
}
