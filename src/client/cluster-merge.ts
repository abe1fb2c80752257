// Merging what several cluster nodes answered for their own shards into one
// answer (docs/CLUSTER.md, "What the clients merge"): dead letters taken from
// every node in turn, `list` pages under one cursor that bundles each node's
// own, and `stats` replies summed. topic-pages.ts merges `topics`.

import { unmatchableSignaturesListedMax } from "../limits.ts";
import type { ItemState } from "./types.ts";

/** Every node's dead letters, each node's in its own order (oldest death first), taken from the nodes in turn, at most `limit`. */
export function interleaveDead(lists: readonly ItemState[][], limit: number): ItemState[] {
  const merged: ItemState[] = [];
  for (let index = 0; merged.length < limit; index++) {
    let any = false;
    for (const list of lists) {
      const item = list[index];
      if (item === undefined) continue;
      any = true;
      if (merged.length < limit) merged.push(item);
    }
    if (!any) break;
  }
  return merged;
}

/** The cursor of a merged `list` page: each node's own `next`, by address ("done" when that node has no more). */
export type ListCursor = Record<string, string>;

const cursorPrefix = "c1.";
/** A node whose listing has ended (its `next` was null). */
export const listDone = "done";

export function encodeListCursor(cursor: ListCursor): string {
  return cursorPrefix + Buffer.from(JSON.stringify(cursor)).toString("base64url");
}

/** Null for a cursor this client did not make (the caller answers BAD_REQUEST-like usage). */
export function decodeListCursor(text: string): ListCursor | null {
  if (!text.startsWith(cursorPrefix)) return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(text.slice(cursorPrefix.length), "base64url").toString());
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return null;
    return Object.values(parsed).every((v) => typeof v === "string") ? (parsed as ListCursor) : null;
  } catch {
    return null;
  }
}

/** Ready items first in delivery order (priority, deliver_at_ms), then the rest in enqueue order, as one node lists them. */
export function listOrder(a: ItemState, b: ItemState): number {
  const aReady = a.state === "ready" ? 0 : 1;
  const bReady = b.state === "ready" ? 0 : 1;
  if (aReady !== bReady) return aReady - bReady;
  if (aReady === 0 && a.priority !== b.priority) return a.priority - b.priority;
  if (aReady === 0 && a.deliverAtMs !== b.deliverAtMs) return a.deliverAtMs - b.deliverAtMs;
  return a.enqueuedAtMs - b.enqueuedAtMs;
}

type Fields = Record<string, unknown>;

/** Fields where the cluster's value is the largest node's, not the sum: clocks, and worker kinds (the same kinds ask every node). */
const largestOf = new Set(["now_ms", "uptime_ms", "askers"]);
/** Fields that are settings every node shares: the first node's. */
const firstOf = new Set(["quota"]);

const isFields = (value: unknown): value is Fields => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * `stats` replies of several nodes as one: counts and counters summed, flags
 * or'ed, clocks and worker kinds the largest, unmatchable requirement sets
 * summed per set; a namespace's `topic_count` (and `totals.topics`, when
 * every namespace listed all its topics) counts distinct topics.
 */
export function sumStats(replies: readonly Fields[]): Fields {
  const merged = mergeFields(replies);
  const namespaces = merged.namespaces;
  if (!isFields(namespaces)) return merged;
  let counted = true;
  let topics = 0;
  for (const ns of Object.values(namespaces)) {
    // A topic several nodes hold counts once (when none of them cut its list short).
    if (isFields(ns) && isFields(ns.topics) && ns.topics_truncated !== true) ns.topic_count = Object.keys(ns.topics).length;
    else counted = false;
    topics += isFields(ns) && typeof ns.topic_count === "number" ? ns.topic_count : 0;
  }
  if (counted && isFields(merged.totals) && typeof merged.totals.topics === "number") merged.totals.topics = topics;
  return merged;
}

function mergeFields(values: readonly Fields[]): Fields {
  const merged: Fields = {};
  const keys = new Set(values.flatMap((value) => Object.keys(value)));
  for (const key of keys) merged[key] = mergeValue(key, values.map((value) => value[key]).filter((value) => value !== undefined));
  return merged;
}

function mergeValue(key: string, values: unknown[]): unknown {
  const present = values.filter((value) => value !== null);
  const first = present[0];
  if (first === undefined) return null;
  if (firstOf.has(key)) return first;
  if (typeof first === "number") {
    const numbers = present.filter((value): value is number => typeof value === "number");
    return largestOf.has(key) ? Math.max(...numbers) : numbers.reduce((sum, n) => sum + n, 0);
  }
  if (typeof first === "boolean") return present.some((value) => value === true);
  if (key === "signatures") return mergeSignatures(present.flatMap((value) => (Array.isArray(value) ? value : [])));
  if (Array.isArray(first)) return present.flatMap((value) => (Array.isArray(value) ? value : []));
  if (isFields(first)) {
    const merged = mergeFields(present.filter(isFields));
    // More requirement sets than one report lists: say so, as a node does.
    if (Array.isArray(merged.signatures) && merged.signatures.length > unmatchableSignaturesListedMax) {
      merged.signatures = merged.signatures.slice(0, unmatchableSignaturesListedMax);
      merged.signatures_truncated = true;
    }
    return merged;
  }
  return first;
}

/** The same requirement set on several nodes becomes one entry with their items summed; most items first. */
function mergeSignatures(signatures: unknown[]): Fields[] {
  const bySet = new Map<string, Fields>();
  for (const signature of signatures) {
    if (!isFields(signature)) continue;
    const setKey = JSON.stringify(signature.requires);
    const items = typeof signature.items === "number" ? signature.items : 0;
    const seen = bySet.get(setKey);
    if (seen === undefined) bySet.set(setKey, { ...signature, items });
    else seen.items = (seen.items as number) + items;
  }
  return [...bySet.values()].sort((a, b) => (b.items as number) - (a.items as number));
}
