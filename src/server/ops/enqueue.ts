// enqueue: validate the whole batch first (the first bad item fails the
// request with its index), then hand it to the engine; the reply waits for
// durability (Reply.durable).

import { EnqueueItem } from "../../engine/ops/enqueue-item.ts";
import type { Limits } from "../../limits.ts";
import { failed, namespacedOp, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import type { RequestReader, Source } from "../request-reader.ts";

const int32Min = -(2 ** 31);
const int32Max = 2 ** 31 - 1;
const deliveryModes = ["at_least_once", "at_most_once"] as const;

export function decodeEnqueueItems(request: Source, limits: Limits, nowMs: number, reader: RequestReader): EnqueueItem[] | null {
  const list = reader.requiredArray(request, "items", 1, limits.itemsPerEnqueueMax);
  if (list === null) return null;
  const items: EnqueueItem[] = new Array(list.length);
  for (let i = 0; i < list.length; i++) {
    reader.at("items", i);
    const source = reader.element(list[i]);
    if (source === null) return null;
    const item = decodeItem(source, limits, nowMs, reader);
    if (item === null) return null;
    items[i] = item;
  }
  reader.top();
  return items;
}

/** One item's fields, checked as enqueue checks them (field paths follow the reader's position: `items[i].`, or `item.` for a schedule's). */
export function decodeItem(source: Source, limits: Limits, nowMs: number, reader: RequestReader): EnqueueItem | null {
  const topic = reader.requiredString(source, "topic", 1, limits.topicBytesMax);
  const priority = reader.intBetween(source, "priority", int32Min, int32Max);
  const payload = reader.bin(source, "payload", limits.payloadBytesMax);
  const metadata = reader.bin(source, "metadata", limits.metadataBytesMax);
  const delayMs = reader.intBetween(source, "delay_ms", 0, limits.delayMsMax);
  const deliverAtMs = reader.intBetween(source, "deliver_at_ms", 0, nowMs + limits.delayMsMax);
  const leaseMs = reader.intBetween(source, "lease_ms", 1, limits.leaseMsMax);
  const ttlMs = reader.intBetween(source, "ttl_ms", 1, limits.delayMsMax);
  const delivery = reader.oneOf(source, "delivery", deliveryModes);
  const maxAttempts = reader.intBetween(source, "max_attempts", 1, int32Max);
  const requires = reader.anyMap(source, "requires");
  const after = source.after === undefined || source.after === null ? null : reader.stringArray(source, "after", 0, limits.afterIdsMax, limits.idBytesMax);
  const key = reader.string(source, "key", 1, limits.keyBytesMax);
  const group = reader.string(source, "group", 1, limits.groupBytesMax);
  const prefers = reader.anyMap(source, "prefers");
  const preferWaitMs = reader.intBetween(source, "prefer_wait_ms", 0, limits.leaseMsMax);
  const trace = reader.string(source, "trace", 0, limits.traceBytesMax);
  if (reader.failure !== null || topic === null) return null;
  if (delayMs !== null && deliverAtMs !== null) {
    reader.fail("BAD_REQUEST", "deliver_at_ms", "give at most one of delay_ms and deliver_at_ms");
    return null;
  }
  // Decoded straight into the engine's EnqueueItem, which becomes the item's record (engine/ops/enqueue-item.ts).
  const item = new EnqueueItem();
  item.topic = topic;
  if (priority !== null) item.priority = priority;
  if (payload !== null) item.payload = payload;
  if (metadata !== null) item.metadata = metadata;
  item.deliverAtMs = deliverAtMs;
  item.delayMs = delayMs;
  item.leaseMs = leaseMs;
  item.ttlMs = ttlMs;
  if (delivery !== null) item.delivery = delivery;
  if (maxAttempts !== null) item.maxAttempts = maxAttempts;
  item.requires = requires;
  item.after = after;
  item.key = key;
  item.group = group;
  item.prefers = prefers;
  if (preferWaitMs !== null) item.preferWaitMs = preferWaitMs;
  item.trace = trace;
  return item;
}

export const enqueueOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: false,
  changesState: true,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = ctx.reader;
    reader.reset();
    const items = decodeEnqueueItems(request, ctx.limits, ctx.nowMs, reader);
    if (items === null) return failed(reader.failure!);
    const result = ctx.engine.enqueue(ns, items, ctx.nowMs);
    if (!result.ok) return failed(result.failure);
    return reply({ ids: result.value.value.ids }, result.value.durable);
  },
});
