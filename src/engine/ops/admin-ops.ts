// The ops on items by id and the read-only views: cancel, get, topics, dead
// and redrive. Each writing op refuses the whole request before any change
// when a shard it must write is unhealthy.

import type { EndedItemState, ItemState, Reply, Result, TopicCounts } from "../api.ts";
import type { LiveItem } from "../state/item.ts";
import { finishOp, type OpContext, refuseUnhealthyShards } from "./op-context.ts";
import { toItemState } from "../state/views.ts";
import { parseId } from "../state/ids.ts";


export function cancel(ctx: OpContext, nsName: string, ids: string[], nowMs: number): Result<Reply<{ cancelled: number; missing: string[] }>> {
  const missing: string[] = [];
  const found: LiveItem[] = [];
  ctx.scratchSeen.clear();
  for (const id of ids) {
    const item = ctx.states.items.get(id);
    if (item === undefined || item.ns !== nsName) missing.push(id);
    else if (!ctx.scratchSeen.has(item)) {
      ctx.scratchSeen.add(item);
      found.push(item);
    }
  }
  ctx.scratchSeen.clear();
  const refused = refuseUnhealthyShards(ctx, found, nowMs);
  if (refused !== null) return refused;
  for (const item of found) ctx.states.endItem(item, "cancelled", nowMs);
  return finishOp(ctx, { cancelled: found.length, missing }, nowMs);
}

export function get(ctx: OpContext, nsName: string, ids: string[]): Result<{ items: Array<ItemState | EndedItemState | null> }> {
  return { ok: true, value: { items: itemStatesOf(ctx, nsName, ids) } };
}

/** Each id's state as `get` answers it (a parked `wait` answers with these too). */
export function itemStatesOf(ctx: OpContext, nsName: string, ids: readonly string[]): Array<ItemState | EndedItemState | null> {
  const out: Array<ItemState | EndedItemState | null> = [];
  for (const id of ids) {
    const item = ctx.states.items.get(id);
    if (item !== undefined) {
      out.push(item.ns === nsName ? toItemState(item, ctx.states.bytes.bytesOf(item)) : null);
      continue;
    }
    out.push(endedState(ctx, nsName, id));
  }
  return out;
}

/** How an item that is not live ended (with an acked item's result), or null when no outcome is retained. */
function endedState(ctx: OpContext, nsName: string, id: string): EndedItemState | null {
  const parsed = parseId(id);
  if (parsed === null) return null;
  const outcome = ctx.states.ended.outcomeOf(nsName, parsed.shard, parsed.key);
  if (outcome === undefined) return null;
  const result = outcome === "acked" ? ctx.states.ended.resultOf(nsName, parsed.shard, parsed.key) : null;
  return result === null ? { id, state: "ended", outcome } : { id, state: "ended", outcome, result };
}

export function topics(ctx: OpContext, nsName: string, query: { prefix: string | null; limit: number; after: string | null }): { topics: TopicCounts[]; next: string | null } {
  const ns = ctx.states.namespaces.get(nsName);
  if (ns === undefined) return { topics: [], next: null };
  const page = ns.page(query.prefix, query.after, query.limit, ctx.states.limits);
  return {
    topics: page.topics.map((t) => {
      const counts: TopicCounts = { topic: t.name, ready: t.ready, delayed: t.delayed, waiting: t.waiting, leased: t.leased, dead: t.dead, paused: t.pause !== null };
      if (t.pause !== null && t.pause.untilMs !== null) counts.pausedUntilMs = t.pause.untilMs;
      return counts;
    }),
    next: page.next,
  };
}

export function dead(ctx: OpContext, nsName: string, topicName: string, limit: number): { items: ItemState[] } {
  const topic = ctx.states.namespaces.get(nsName)?.topics.get(topicName);
  const out: ItemState[] = [];
  if (topic === undefined) return { items: out };
  const max = Math.min(limit, ctx.states.limits.deadPageMax);
  for (const item of topic.deadLetters) {
    if (out.length >= max) break;
    out.push(toItemState(item, ctx.states.bytes.bytesOf(item)));
  }
  return { items: out };
}

export function redrive(ctx: OpContext, nsName: string, topicName: string, ids: string[] | null, nowMs: number): Result<Reply<{ redriven: number }>> {
  const topic = ctx.states.namespaces.get(nsName)?.topics.get(topicName);
  const found: LiveItem[] = [];
  if (topic !== undefined) {
    if (ids === null) {
      for (const item of topic.deadLetters) {
        if (found.length >= ctx.states.limits.redriveAllMax) break;
        found.push(item);
      }
    } else {
      ctx.scratchSeen.clear();
      for (const id of ids) {
        const item = ctx.states.items.get(id);
        if (item === undefined || item.topic !== topic || item.state !== "dead" || ctx.scratchSeen.has(item)) continue;
        ctx.scratchSeen.add(item);
        found.push(item);
      }
      ctx.scratchSeen.clear();
    }
  }
  const refused = refuseUnhealthyShards(ctx, found, nowMs);
  if (refused !== null) return refused;
  for (const item of found) {
    item.attempt = 0;
    const extras = item.ensureExtras();
    extras.deadReason = null;
    // A redriven item does not wait on its `after` list again (a failed dependency is
    // never acked). The list is dropped from the record too, so recovery does not
    // re-read it and kill the item a second time.
    extras.after = null;
    ctx.states.release(item, item.deliverAtMs, nowMs);
    ctx.states.namespaces.get(nsName)!.counters.redriven++;
  }
  return finishOp(ctx, { redriven: found.length }, nowMs);
}
