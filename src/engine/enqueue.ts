// enqueue: validate a batch as a whole, answer idempotency keys, pick one
// healthy shard for the new items (in cluster mode, a keyed or `after` item
// goes where the ShardPlacement says instead), charge the namespace quota, and store the
// items. A new item becomes takeable only once its enqueue commit is durable
// (activate); if that commit fails it leaves memory as if never enqueued
// (rollback), so nothing undurable is ever delivered.

import { assert } from "../lib/assert.ts";
import type { EnqueueItemInput, Reply, Result } from "./api.ts";
import { enqueueRefusal } from "./capacity.ts";
import { Deadline, DeadlineKind } from "./deadlines.ts";
import { type AfterClassification, classifyAfter, type DependencyStatus } from "./dependencies.ts";
import { completeRecord } from "./enqueue-item.ts";
import { fail, unavailable } from "./failures.ts";
import { formatId } from "./ids.ts";
import { LiveItem } from "./item.ts";
import type { UnstoredBytes } from "./item-parts.ts";
import type { ItemStates } from "./item-states.ts";
import { parseRequires, type Requires, signatureRegistryFull } from "./matching/index.ts";
import type { OpContext } from "./op-context.ts";
import { chooseWritableShard } from "./writable-shards.ts";

/** Cluster mode: the shard an item must live on (its key's or its first `after` id's), or -1 for any healthy one. */
export interface ShardPlacement {
  shardFor(ns: string, input: EnqueueItemInput): number;
  /** Whether an id lives on a shard this node does not serve: unknown here, it counts as live (remote-dependencies.ts). */
  elsewhere(id: string): boolean;
}

/** Retry hint when the signature registry is full (1 s): signatures free up as items with rare requires end. */
const signaturesFullRetryAfterMs = 1000;

export class Enqueuer {
  /** Enqueues whose commit failed and were rolled out of memory (stats). */
  rollbacks = 0;
  private nextShard = 0;
  private readonly s: ItemStates;

  constructor(
    private readonly ctx: OpContext,
    /** The latest nowMs the engine has seen, for work done when a commit lands (outside any op). */
    private readonly latestNowMs: () => number,
    private readonly placement: ShardPlacement | null = null,
  ) {
    this.s = ctx.s;
  }

  /** Run by Engine.enqueue once due deadlines are handled. */
  enqueue(nsName: string, inputs: EnqueueItemInput[], nowMs: number): Result<Reply<{ ids: string[] }>> {
    const count = inputs.length;
    // Per-item side results, made only when some item has one: most batches have no requires and no `after`.
    let requires: Array<Requires | null> | null = null;
    let after: Array<AfterClassification | null> | null = null;
    let lookup: ((id: string) => DependencyStatus) | null = null;
    for (let i = 0; i < count; i++) {
      const input = inputs[i] as EnqueueItemInput;
      if (input.requires !== null) {
        const r = parseRequires(input.requires, `items[${i}].requires`, this.s.limits);
        if (!r.ok) return fail(r.code, r.message, { field: r.field, index: i });
        requires ??= new Array<Requires | null>(count).fill(null);
        requires[i] = r.value;
      }
      if (input.after === null) continue;
      lookup ??= this.dependencyLookup(nsName);
      const c = classifyAfter(input.after, lookup, this.s.limits.afterIdsMax);
      if (c.kind === "not_found") {
        const id = input.after[c.index];
        return fail("NOT_FOUND", `after id ${JSON.stringify(id)} is not known in this namespace`, { field: `items[${i}].after[${c.index}]`, index: i });
      }
      if (c.kind === "too_large") {
        return fail("TOO_LARGE", `after lists more than ${this.s.limits.afterIdsMax} ids`, { field: `items[${i}].after`, index: i });
      }
      after ??= new Array<AfterClassification | null>(count).fill(null);
      after[i] = c;
    }

    // Idempotency: a key held by a live item (or an earlier item of this batch) returns that item's id.
    const existingNs = this.s.namespaces.get(nsName);
    const ids: string[] = new Array<string>(count);
    const sameAs: number[] = new Array<number>(count).fill(-1);
    let waitOn: Promise<void>[] | null = null;
    let batchKeys: Map<string, Map<string, number>> | null = null;
    let fresh = 0;
    for (let i = 0; i < count; i++) {
      const input = inputs[i] as EnqueueItemInput;
      if (input.key !== null) {
        const existing = existingNs?.topics.get(input.topic)?.keys.get(input.key);
        if (existing !== undefined) {
          ids[i] = existing.id;
          if (existing.commit !== null) (waitOn ??= []).push(existing.commit);
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
    // The live-item, topic and namespace maxima, before anything changes (capacity.ts).
    const refused = enqueueRefusal(this.s, nsName, inputs, (i) => sameAs[i] === -1 && ids[i] === undefined, fresh);
    if (refused !== null) return refused;

    const signatures: number[] = new Array<number>(count).fill(0);
    for (let i = 0; i < count; i++) {
      if (sameAs[i] !== -1 || ids[i] !== undefined) continue;
      const sig = this.s.registry.intern(requires === null ? null : (requires[i] as Requires | null));
      if (sig === signatureRegistryFull) {
        this.releaseSignatures(signatures);
        return fail("UNAVAILABLE", "too many distinct requires signatures are live", { field: `items[${i}].requires`, index: i, retryAfterMs: signaturesFullRetryAfterMs });
      }
      signatures[i] = sig;
    }

    const placed = this.placement === null ? null : this.place(nsName, inputs, sameAs, ids, nowMs);
    if (placed !== null && !Array.isArray(placed)) {
      this.releaseSignatures(signatures);
      return unavailable(placed.retryAfterMs, `shard ${placed.shard} is not accepting writes`);
    }
    let shard = -1;
    if (fresh > 0 && (placed === null || placed.includes(-1))) {
      const chosen = chooseWritableShard(this.s.writer, this.s.writer.shardCount, this.nextShard, nowMs);
      if (chosen.shard < 0) {
        this.releaseSignatures(signatures);
        return unavailable(chosen.retryAfterMs, chosen.reason);
      }
      shard = chosen.shard;
      this.nextShard = (shard + 1) % this.s.writer.shardCount;
    }
    const ns = this.s.namespace(nsName, nowMs);
    if (fresh > 0 && ns.bucket !== null) {
      const verdict = ns.bucket.take(fresh, nowMs);
      if (!verdict.ok) {
        this.releaseSignatures(signatures);
        if (verdict.refusal === "too_large") {
          return fail("TOO_LARGE", `batch of ${fresh} new items exceeds the namespace quota of ${ns.bucket.perMinute} items per minute`, { field: "items" });
        }
        if (verdict.refusal === "unavailable") return unavailable(verdict.retryAfterMs, verdict.message ?? "the namespace quota cannot be checked");
        return fail("RATE_LIMITED", `namespace ${JSON.stringify(nsName)} is over its enqueue quota`, { retryAfterMs: verdict.retryAfterMs });
      }
    }
    const set = this.s.ws();
    const created: LiveItem[] = [];
    for (let i = 0; i < count; i++) {
      if (sameAs[i] !== -1 || ids[i] !== undefined) continue;
      const input = inputs[i] as EnqueueItemInput;
      const key = this.s.writer.nextKey();
      const itemShard = placed === null || placed[i] === -1 ? shard : (placed[i] as number);
      const id = formatId(itemShard, key);
      // The record is also what the item holds until its commit (UnstoredBytes: its payload, metadata and commit).
      const record = completeRecord(input, nsName, nowMs);
      const topic = ns.topic(input.topic);
      const sig = signatures[i] as number;
      topic.joinGroup(sig);
      // Memory holds the payload and metadata only until the commit (activate drops them).
      const item = new LiveItem(itemShard, key, topic, sig, record, "ready", record);
      this.s.items.add(item);
      if (input.key !== null) topic.keys.set(input.key, item);
      const c = after === null ? null : (after[i] as AfterClassification | null);
      let deadReason: string | null = null;
      if (c?.kind === "dead") {
        deadReason = c.deadReason;
        record.state = "dead";
        record.deadReason = deadReason;
      } else if (c?.kind === "waiting") {
        this.s.graph.addWaiting(id, c.unmet);
      }
      this.s.admit(item, deadReason, nowMs);
      if (record.ttlExpiresAtMs !== null) item.ensureExtras().ttlNode = this.s.deadlines.schedule(new Deadline(record.ttlExpiresAtMs, DeadlineKind.Ttl, item));
      // The record itself is the write: the item copied what it keeps, so nothing changes it later.
      set.putItem(itemShard, key, record);
      ns.counters.enqueued++;
      created.push(item);
      ids[i] = id;
    }
    for (let i = 0; i < count; i++) if (sameAs[i] !== -1) ids[i] = ids[sameAs[i] as number] as string;

    const end = this.s.endSet() as Promise<void>;
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

  /** Whether an `after` id is live, ended or unknown in namespace `nsName` (in cluster mode, an id on a shard served elsewhere counts as live). */
  private dependencyLookup(nsName: string): (id: string) => DependencyStatus {
    const placement = this.placement;
    if (placement === null) return (id: string) => this.s.dependencyStatus(nsName, id);
    return (id: string) => {
      const status = this.s.dependencyStatus(nsName, id);
      return status === "unknown" && placement.elsewhere(id) ? "live" : status;
    };
  }

  /** Give back the signature references a refused enqueue took (0 entries are no-ops). */
  private releaseSignatures(signatures: number[]): void {
    for (const sig of signatures) this.s.registry.release(sig);
  }

  /** The enqueue's commit is durable: its ready items become takeable. */
  private activate(created: LiveItem[]): void {
    for (const item of created) {
      if (!this.s.items.holds(item)) continue;
      this.s.stored(item);
    }
    this.ctx.wake(this.latestNowMs());
  }

  /** The enqueue's commit failed: its items leave memory as if never enqueued (they were never takeable). */
  private rollback(created: LiveItem[]): void {
    assert(this.s.set === null, "engine: rollback inside an op");
    this.rollbacks++;
    for (const item of created) {
      if (!this.s.items.holds(item)) continue;
      this.s.discard(item);
      // Items enqueued meanwhile with this id in `after` cannot wait for it any more.
      for (const killed of this.s.graph.onFailed(item.id, "cancelled")) {
        const dependent = this.s.items.get(killed.itemId);
        if (dependent !== undefined) this.s.killItem(dependent, killed.deadReason);
      }
    }
    this.s.endSetBackground();
  }

  /** Cluster mode: each fresh item's required shard (-1: any), or the first required shard that refuses writes. */
  private place(nsName: string, inputs: EnqueueItemInput[], sameAs: number[], ids: string[], nowMs: number): number[] | { shard: number; retryAfterMs: number } {
    const shards: number[] = new Array<number>(inputs.length).fill(-1);
    for (let i = 0; i < inputs.length; i++) {
      if (sameAs[i] !== -1 || ids[i] !== undefined) continue;
      const shard = (this.placement as ShardPlacement).shardFor(nsName, inputs[i] as EnqueueItemInput);
      if (shard < 0) continue;
      const availability = this.s.writer.writable(shard, nowMs);
      if (!availability.available) return { shard, retryAfterMs: availability.retryAfterMs };
      shards[i] = shard;
    }
    return shards;
  }
}
