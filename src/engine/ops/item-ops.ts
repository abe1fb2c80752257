// Ops on single items by id, and ordered looks into one topic: inspect, take
// (lease a named item), deadLetter (a leased item becomes a dead letter now),
// deliverNow (a delayed item becomes ready now), firstIds and countReadyBelow.
// The contract's ops do not need them; the beanstalkd port does (reserve-job,
// bury, kick, kick-job, peek-*, stats), and they are kept general so any front
// end may use them. Like every writing op, each refuses the whole request
// before any change when a shard it must write is unhealthy.

import type { Delivery, ItemDetail, ListableState, Reply, Result } from "../api.ts";
import type { LiveItem } from "../state/item.ts";
import { finishOp, type OpContext, refuseUnhealthyShards } from "./op-context.ts";
import { leasedByEntries } from "./receipt-ops.ts";
import { readyLess } from "../ready/ready-heap.ts";
import type { Topic } from "../ready/topic.ts";
import { toItemState } from "../state/views.ts";

export function inspect(ctx: OpContext, nsName: string, id: string): ItemDetail | null {
  const item = ctx.states.items.get(id);
  if (item === undefined || item.ns !== nsName) return null;
  return { ...toItemState(item, ctx.states.bytes.bytesOf(item)), leaseMs: item.leaseMs, deliveries: item.deliveries, maxAttempts: item.maxAttempts };
}

/**
 * Lease the named item now: a ready item leaves its heap, a delayed one its
 * due deadline, a dead letter its list (its dead reason is dropped). A leased
 * or waiting item, an enqueue not yet durable, a paused topic's item included,
 * answers null: the first two belong to someone else, the third is not
 * acknowledged yet. The lease counts as a delivery like any other.
 */
export function take(ctx: OpContext, nsName: string, id: string, leaseMs: number | null, nowMs: number): Result<Reply<{ delivery: Delivery | null }>> {
  const item = ctx.states.items.get(id);
  const takeable = item !== undefined && item.ns === nsName && item.committed && (item.state === "ready" || item.state === "delayed" || item.state === "dead");
  if (!takeable) return { ok: true, value: { value: { delivery: null }, durable: null } };
  const refused = refuseUnhealthyShards(ctx, [item], nowMs);
  if (refused !== null) return refused;
  if (item.state !== "ready") ctx.states.readyNow(item, nowMs);
  const delivery = ctx.states.lease(item, leaseMs, nowMs, ctx.states.ws());
  return finishOp(ctx, { delivery }, nowMs);
}

export function deadLetter(
  ctx: OpContext,
  nsName: string,
  entries: Array<{ receipt: string; priority: number | null; reason: string }>,
  nowMs: number,
): Result<Reply<{ dead: number; stale: string[] }>> {
  const { found, chosen, stale } = leasedByEntries(ctx, nsName, entries);
  const refused = refuseUnhealthyShards(ctx, found, nowMs);
  if (refused !== null) return refused;
  for (let f = 0; f < found.length; f++) {
    const item = found[f] as LiveItem;
    const entry = entries[chosen[f] as number] as { priority: number | null; reason: string };
    ctx.states.killItem(item, entry.reason, entry.priority);
  }
  return finishOp(ctx, { dead: found.length, stale }, nowMs);
}

export function deliverNow(ctx: OpContext, nsName: string, ids: string[], nowMs: number): Result<Reply<{ moved: number; missing: string[] }>> {
  const missing: string[] = [];
  const found: LiveItem[] = [];
  ctx.scratchSeen.clear();
  for (const id of ids) {
    const item = ctx.states.items.get(id);
    if (item === undefined || item.ns !== nsName || item.state !== "delayed") missing.push(id);
    else if (!ctx.scratchSeen.has(item)) {
      ctx.scratchSeen.add(item);
      found.push(item);
    }
  }
  ctx.scratchSeen.clear();
  const refused = refuseUnhealthyShards(ctx, found, nowMs);
  if (refused !== null) return refused;
  for (const item of found) ctx.states.release(item, nowMs, nowMs);
  return finishOp(ctx, { moved: found.length, missing }, nowMs);
}

/**
 * Ids of up to `limit` items of one topic in one state. Ready: the best
 * takeable item only (the next one a dequeue without capabilities or
 * requirements would weigh first), whatever the limit. Dead: the order they
 * died. Delayed: by due time then enqueue order, found by a scan of the live
 * items (no per-topic delay index exists; this look is rare).
 */
export function firstIds(ctx: OpContext, nsName: string, topicName: string, state: ListableState, limit: number): string[] {
  const topic = ctx.states.namespaces.get(nsName)?.topics.get(topicName);
  if (topic === undefined || limit <= 0) return [];
  if (state === "ready") {
    const best = bestReadyOf(topic);
    return best === null ? [] : [best.id];
  }
  if (state === "dead") {
    const ids: string[] = [];
    for (const item of topic.deadLetters) {
      if (ids.length >= limit) break;
      ids.push(item.id);
    }
    return ids;
  }
  if (topic.delayed === 0) return [];
  const delayed: LiveItem[] = [];
  for (const item of ctx.states.items.values()) if (item.topic === topic && item.state === "delayed") delayed.push(item);
  delayed.sort((a, b) => a.deliverAtMs - b.deliverAtMs || a.key - b.key);
  return delayed.slice(0, limit).map((item) => item.id);
}

export function bestReadyTopic(ctx: OpContext, nsName: string, topicNames: string[]): string | null {
  const ns = ctx.states.namespaces.get(nsName);
  if (ns === undefined) return null;
  let best: LiveItem | null = null;
  for (const name of topicNames) {
    const topic = ns.topics.get(name);
    // A paused topic delivers nothing (pause.ts).
    if (topic === undefined || topic.takeable === 0 || topic.pause !== null) continue;
    const top = bestReadyOf(topic);
    if (top !== null && (best === null || readyLess(top, best))) best = top;
  }
  return best === null ? null : best.topic.name;
}

/** The topic's best takeable item over every signature group and shard heap (a few heap peeks). */
function bestReadyOf(topic: Topic<LiveItem>): LiveItem | null {
  let best: LiveItem | null = null;
  for (const group of topic.signatures.values()) {
    for (const heap of group.heaps) {
      const top = heap?.peek();
      if (top !== undefined && (best === null || readyLess(top, best))) best = top;
    }
  }
  return best;
}

export function countReadyBelow(ctx: OpContext, nsName: string, topicName: string | null, priorityBelow: number): number {
  const ns = ctx.states.namespaces.get(nsName);
  if (ns === undefined) return 0;
  const topic = topicName === null ? null : ns.topics.get(topicName);
  if (topic === undefined) return 0;
  let count = 0;
  for (const item of ctx.states.items.values()) {
    if (item.state !== "ready" || item.priority >= priorityBelow) continue;
    if (topic === null ? item.ns === nsName : item.topic === topic) count++;
  }
  return count;
}
