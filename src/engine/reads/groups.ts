// The `groups` op: a topic's groups with their per-state counts and pauses,
// by name (the nil group, items without a group, first), one page at a time.
// A topic that never named a group answers its items as the nil group.

import type { GroupCounts } from "../api.ts";
import type { Group } from "../groups/group.ts";
import type { LiveItem } from "../state/item.ts";
import type { ReadonlyNamespaceMap } from "../state/namespace.ts";
import type { Topic } from "../ready/topic.ts";

function countsOf(name: string | null, counts: { ready: number; delayed: number; waiting: number; leased: number; dead: number }, pausedUntil: number | null | undefined): GroupCounts {
  const entry: GroupCounts = { group: name, ready: counts.ready, delayed: counts.delayed, waiting: counts.waiting, leased: counts.leased, dead: counts.dead, paused: pausedUntil !== undefined };
  if (pausedUntil !== undefined && pausedUntil !== null) entry.pausedUntilMs = pausedUntil;
  return entry;
}

function groupCounts(group: Group<LiveItem>): GroupCounts {
  return countsOf(group.name, group, group.pause === null ? undefined : group.pause.untilMs);
}

/** A page of the topic's groups after `after` (a group name; "" stands after the nil group). */
export function groupsPage(namespaces: ReadonlyNamespaceMap, ns: string, topicName: string, query: { limit: number; after: string | null }): { groups: GroupCounts[]; next: string | null } {
  const topic = namespaces.get(ns)?.topics.get(topicName);
  if (topic === undefined) return { groups: [], next: null };
  const all = entries(topic);
  let start = 0;
  const after = query.after;
  if (after !== null) {
    start = all.length;
    for (let i = 0; i < all.length; i++) {
      const name = (all[i] as GroupCounts).group;
      if (name !== null && name > after) {
        start = i;
        break;
      }
    }
  }
  const page = all.slice(start, start + query.limit);
  const more = start + page.length < all.length;
  const last = page[page.length - 1];
  return { groups: page, next: more && last !== undefined ? (last.group ?? "") : null };
}

/** Every group of the topic with something to show: the nil group when it holds items, then the named ones by name. */
function entries(topic: Topic<LiveItem>): GroupCounts[] {
  const rotation = topic.rotation;
  if (rotation === null) return topic.total === 0 ? [] : [countsOf(null, topic, undefined)];
  const out: GroupCounts[] = [];
  if (rotation.nil.items > 0) out.push(groupCounts(rotation.nil));
  const named = [...rotation.named.values()].filter((group) => group.items > 0 || group.pause !== null);
  named.sort((a, b) => ((a.name as string) < (b.name as string) ? -1 : (a.name as string) > (b.name as string) ? 1 : 0));
  for (const group of named) out.push(groupCounts(group));
  return out;
}
