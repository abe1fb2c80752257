// The `list` op: one topic's items, a page at a time, read only. Ready items
// come in delivery order, the others (delayed, waiting, leased, dead) in
// enqueue order; without a state filter the ready items come first, then
// the others. Items whose enqueue is not durable yet are not listed.
//
// Ready items are walked in delivery order by list-ready.ts, which says
// what a page costs.
//
// The others are found by walking the item table in key order (keys grow
// with every enqueue, on every shard: list-cursor.ts), from the cursor, per
// shard, at most limits.listScanSlotsMax slots in all. The page holds the
// matches up to the smallest key where a shard's walk stopped, so a page may
// come back short (even empty) with `next` set, in a topic that is a small
// part of a large store. No index per topic is kept for this: it would cost
// memory for every item and work on every enqueue and end.

import type { ListCursor, ListPage, ListQuery, LiveStateName } from "../api.ts";
import type { LiveItem } from "../state/item.ts";
import type { ItemStates } from "../state/item-states.ts";
import type { ReadonlyItemTable } from "../state/item-table.ts";
import { readyCursor, scanReady, walkReady } from "./list-ready.ts";
import type { Topic } from "../ready/topic.ts";
import { toItemState } from "../state/views.ts";

export function listItems(states: ItemStates, nsName: string, topicName: string, query: ListQuery): ListPage {
  const topic = states.namespaces.get(nsName)?.topics.get(topicName);
  if (topic === undefined) return { items: [], next: null };
  const { state, limit, after } = query;
  const found: LiveItem[] = [];
  let next: ListCursor | null = null;
  let othersFromKey = -1;
  if ((state === null || state === "ready") && (after === null || after.phase === "ready")) {
    const cursor = after !== null && after.phase === "ready" ? after : null;
    let more = walkReady(topic, cursor, limit, states.limits.listReadyVisitsMax, found);
    if (more === null) more = scanReady(states.items, topic, cursor, limit, found);
    if (more) next = readyCursor(found[found.length - 1] as LiveItem);
    else if (state === null && found.length === limit && topic.total > topic.ready) next = { phase: "enqueued", key: -1 };
  } else if (after !== null && after.phase === "enqueued") {
    othersFromKey = after.key;
  }
  if (state !== "ready" && next === null && found.length < limit) {
    next = walkEnqueued(states.items, topic, state, othersFromKey, limit - found.length, states.limits.listScanSlotsMax, found);
  }
  return { items: found.map((item) => toItemState(item, states.bytes.bytesOf(item))), next };
}

/** First index whose key is above `key` (keys ascend). */
function firstAbove(keys: readonly number[], key: number): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as number) <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Append up to `want` of the topic's items in `state` (null: every state but
 * ready) with keys above `afterKey` to `out`, in key order, visiting at most
 * about `slotsMax` slots; the cursor to continue from, or null when done.
 */
function walkEnqueued(
  items: ReadonlyItemTable,
  topic: Topic<LiveItem>,
  state: LiveStateName | null,
  afterKey: number,
  want: number,
  slotsMax: number,
  out: LiveItem[],
): ListCursor | null {
  const shardCount = items.shardCount;
  // Each shard may visit its share, and at least `want` slots, so every page makes progress.
  const slotsPerShard = Math.max(want, Math.ceil(slotsMax / Math.max(1, shardCount)));
  const matches: LiveItem[] = [];
  // Every match at or below this key has been found on every shard.
  let boundary = Number.POSITIVE_INFINITY;
  for (let shard = 0; shard < shardCount; shard++) {
    const slots = items.shardSlots(shard);
    if (slots === null) continue;
    const keys = slots.keys;
    const shardItems = slots.items;
    const start = firstAbove(keys, afterKey);
    const stop = Math.min(keys.length, start + slotsPerShard);
    // One match beyond `want` tells whether more follow without another page.
    let found = 0;
    let index = start;
    for (; index < stop; index++) {
      const item = shardItems[index];
      if (item === undefined || item.topic !== topic) continue;
      if (state === null ? item.state === "ready" : item.state !== state) continue;
      matches.push(item);
      if (++found > want) break;
    }
    if (index < stop) boundary = Math.min(boundary, keys[index] as number);
    else if (stop < keys.length) boundary = Math.min(boundary, keys[stop - 1] as number);
  }
  matches.sort((a, b) => a.key - b.key);
  let inRange = 0;
  while (inRange < matches.length && (matches[inRange] as LiveItem).key <= boundary) inRange++;
  const taken = Math.min(inRange, want);
  for (let i = 0; i < taken; i++) out.push(matches[i] as LiveItem);
  if (inRange > want) return { phase: "enqueued", key: (matches[taken - 1] as LiveItem).key };
  return boundary === Number.POSITIVE_INFINITY ? null : { phase: "enqueued", key: boundary };
}
