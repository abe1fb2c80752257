// The ready items of one topic in delivery order, a page after a cursor, for
// `list` (list.ts). Ready items sit in pairing heaps (one per priority level
// of each signature group and shard, ready/ready-heap.ts), which have no order to
// walk, so a page is found one of two ways.
//
// The walk: every heap's root starts a depth-first pass over the items at or
// before the cursor (listed already), which collects the first items after
// it; a small frontier heap then gives those out best first, adding each
// given item's children. Before it looks at an item's children the walk
// pairs them into one subtree (PairingHeap.compactChildren, the work that
// item's pop would do anyway): a root that gathered a million children from
// inserts would otherwise put them all in the frontier. It costs
// O(items before the cursor + limit · log), cheap for the first pages.
//
// The scan: deep in a large topic the walk would visit too many items (it
// gives up after limits.listReadyVisitsMax), so the page is chosen in one
// pass over the item table instead, keeping the best `limit` items after the
// cursor: O(items in the store), with a small constant (arrays in key order).

import { type HeapLinks, PairingHeap } from "../../lib/pairing-heap.ts";
import type { LiveItem } from "../state/item.ts";
import type { ReadonlyItemTable } from "../state/item-table.ts";
import type { ListCursor } from "../api.ts";
import { readyLess } from "../ready/ready-heap.ts";
import type { Topic } from "../ready/topic.ts";

type ReadyCursor = ListCursor & { phase: "ready" };

export function readyCursor(item: LiveItem): ListCursor {
  return { phase: "ready", priority: item.priority, deliverAtMs: item.deliverAtMs, key: item.key };
}

/** Whether the cursor orders before the item in delivery order (the item is still to list). */
function isAfterCursor(cursor: ReadyCursor, item: LiveItem): boolean {
  if (item.priority !== cursor.priority) return item.priority > cursor.priority;
  if (item.deliverAtMs !== cursor.deliverAtMs) return item.deliverAtMs > cursor.deliverAtMs;
  return item.key > cursor.key;
}

const nodeLess = (a: HeapLinks<LiveItem>, b: HeapLinks<LiveItem>): boolean => readyLess(a.value, b.value);

/**
 * Append up to `limit` ready items after the cursor to `out`, in delivery
 * order, by the walk; true when more follow. Null (nothing appended) when the
 * items before the cursor number more than `visitsMax`: use scanReady.
 */
export function walkReady(topic: Topic<LiveItem>, cursor: ReadyCursor | null, limit: number, visitsMax: number, out: LiveItem[]): boolean | null {
  const frontier = new PairingHeap<HeapLinks<LiveItem>>(nodeLess);
  const stack: Array<HeapLinks<LiveItem>> = [];
  for (const group of topic.signatures.values()) {
    for (const shardHeap of group.heaps) {
      if (shardHeap === undefined) continue;
      // Each priority level's heap is a tree of its own (ready/ready-heap.ts); a
      // level of a priority before the cursor's was listed whole already.
      for (const root of shardHeap.walkRoots(cursor === null ? -Infinity : cursor.priority)) stack.push(root);
    }
  }
  // Items of named groups sit in their group's heap (engine/groups/group.ts), listed by the same order.
  for (const group of topic.rotation?.named.values() ?? []) {
    for (const heap of group.heaps()) for (const root of heap.walkRoots(cursor === null ? -Infinity : cursor.priority)) stack.push(root);
  }
  // Depth first over the items listed already; the first items after the cursor join the frontier.
  let visits = 0;
  while (stack.length > 0) {
    const node = stack.pop() as HeapLinks<LiveItem>;
    if (cursor === null || isAfterCursor(cursor, node.value)) {
      frontier.insert(node);
      continue;
    }
    if (++visits > visitsMax) return null;
    topic.readyHeapOf(node.value).compactChildren(node);
    for (let child = node.child; child !== null; child = child.next) stack.push(child);
  }
  const end = out.length + limit;
  while (out.length < end) {
    const node = frontier.pop();
    if (node === undefined) return false;
    out.push(node.value);
    topic.readyHeapOf(node.value).compactChildren(node);
    for (let child = node.child; child !== null; child = child.next) frontier.insert(child);
  }
  return frontier.size > 0;
}

/**
 * Append up to `limit` ready items after the cursor to `out`, in delivery
 * order, by one pass over the item table; true when more follow. Candidates
 * gather in an array that is sorted and cut back to limit + 1 whenever it
 * doubles, and the cut's last item then turns away everything after it.
 */
export function scanReady(items: ReadonlyItemTable, topic: Topic<LiveItem>, cursor: ReadyCursor | null, limit: number, out: LiveItem[]): boolean {
  const keep = limit + 1;
  const best: LiveItem[] = [];
  let worstKept: LiveItem | null = null;
  const byDelivery = (a: LiveItem, b: LiveItem): number => (readyLess(a, b) ? -1 : readyLess(b, a) ? 1 : 0);
  for (let shard = 0; shard < items.shardCount; shard++) {
    const slots = items.shardSlots(shard);
    if (slots === null) continue;
    const shardItems = slots.items;
    for (let index = 0; index < shardItems.length; index++) {
      const item = shardItems[index];
      // Only items in a ready heap: a ready item whose enqueue is not durable yet is not listed.
      if (item === undefined || item.topic !== topic || !item.inReadyHeap) continue;
      if (cursor !== null && !isAfterCursor(cursor, item)) continue;
      if (worstKept !== null && !readyLess(item, worstKept)) continue;
      best.push(item);
      if (best.length >= 2 * keep) {
        best.sort(byDelivery);
        best.length = keep;
        worstKept = best[keep - 1] as LiveItem;
      }
    }
  }
  best.sort(byDelivery);
  const taken = Math.min(limit, best.length);
  for (let i = 0; i < taken; i++) out.push(best[i] as LiveItem);
  return best.length > limit;
}
