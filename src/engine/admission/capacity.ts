// The server-wide maxima of what clients create: live items
// (limits.liveItemsMax), topics (topicsMax) and namespaces (namespacesMax).
// Enqueue and a pause of an unknown topic ask here before they change
// anything, so a refused request stores nothing. Each check reads counts the
// engine keeps as things appear and vanish (the item table's size,
// NamespaceMap.topicCount, the namespace map's size): O(1) per item, no scan.
// Recovery and a pause from another node (cluster) are not checked: what is
// stored is loaded even over a lowered maximum, and new things are refused
// until the count falls below it.

import type { Limits } from "../../limits.ts";
import { atBatch, atItem, atNamespace, atTopic, type FailureLocation } from "../failures/failure-location.ts";
import { fail, type FailureResult } from "../failures/failures.ts";

/**
 * What the checks read, structurally: the engine's state (ItemStates) is one,
 * but naming it here would pull this file into the engine's import circle.
 */
export interface Counted {
  readonly limits: Pick<Limits, "liveItemsMax" | "topicsMax" | "namespacesMax">;
  readonly items: { readonly size: number };
  readonly namespaces: ReadonlyMap<string, { readonly topics: ReadonlyMap<string, unknown> }> & { readonly topicCount: number };
}

function tooLarge(message: string, at: FailureLocation): FailureResult {
  return fail("over_limit", message, { at });
}

/** A new namespace over namespacesMax, or null. */
function namespaceRefusal(s: Counted, nsName: string): FailureResult | null {
  const max = s.limits.namespacesMax;
  if (s.namespaces.has(nsName) || s.namespaces.size < max) return null;
  return tooLarge(`the server holds ${s.namespaces.size} namespaces, the most it may (namespaces_max ${max}): namespace ${JSON.stringify(nsName)} is new`, atNamespace);
}

/**
 * Whether an enqueue's new items fit: `fresh` items are new (the others are
 * idempotent repeats, which create nothing), `isNew(i)` says which.
 */
export function enqueueRefusal(s: Counted, nsName: string, inputs: ReadonlyArray<{ readonly topic: string }>, isNew: (i: number) => boolean, fresh: number): FailureResult | null {
  const refused = namespaceRefusal(s, nsName);
  if (refused !== null || fresh === 0) return refused;
  const { liveItemsMax, topicsMax } = s.limits;
  const live = s.items.size;
  if (live + fresh > liveItemsMax) {
    return tooLarge(`the server holds ${live} live items: ${fresh} new ones would pass live_items_max (${liveItemsMax})`, atBatch);
  }
  const topics = s.namespaces.get(nsName)?.topics;
  let added = null as Set<string> | null;
  let previous: string | null = null;
  for (let i = 0; i < inputs.length; i++) {
    if (!isNew(i)) continue;
    const topic = (inputs[i] as { topic: string }).topic;
    // A batch is mostly one topic: one comparison per item then.
    if (topic === previous) continue;
    previous = topic;
    if (topics?.has(topic) === true || added?.has(topic) === true) continue;
    added ??= new Set();
    added.add(topic);
    if (s.namespaces.topicCount + added.size > topicsMax) {
      return tooLarge(`the server holds ${s.namespaces.topicCount} topics, the most it may (topics_max ${topicsMax}): topic ${JSON.stringify(topic)} is new`, atItem(i, { of: "topic" }));
    }
  }
  return null;
}

/** Whether a pause may create its topic (and namespace) when neither holds anything yet. */
export function newTopicRefusal(s: Counted, nsName: string, topicName: string): FailureResult | null {
  if (s.namespaces.get(nsName)?.topics.has(topicName) === true) return null;
  const refused = namespaceRefusal(s, nsName);
  if (refused !== null) return refused;
  const max = s.limits.topicsMax;
  if (s.namespaces.topicCount < max) return null;
  return tooLarge(`the server holds ${s.namespaces.topicCount} topics, the most it may (topics_max ${max}): topic ${JSON.stringify(topicName)} is new`, atTopic);
}
