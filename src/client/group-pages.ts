// Merging the `groups` pages of several cluster nodes into one page. Each
// node answers for the groups on its own shards; a group lives on one shard,
// so it normally comes from one node, but while a shard moves two nodes may
// both count it, and then its counts are summed. The paging is that of
// topic-pages.ts: each node was asked for the same page and a node that has
// more stops at its last group; past the smallest such stop some node's
// groups are not known yet, so the merged page ends there (or at `limit`),
// and `next` is the cursor a single server would give.
//
// The items without a group (`group: null`) sort first and page under the
// cursor "" (a group name is at least one byte, so "" names no other group).

import type { GroupCounts, GroupPage } from "./types.ts";

/** The sort key and cursor of a group: its name, "" for the items without one. */
function groupCursor(group: string | null): string {
  return group ?? "";
}

export function mergeGroupPages(pages: readonly GroupPage[], limit?: number): GroupPage {
  const merged = new Map<string, GroupCounts>();
  let knownThrough: string | null = null;
  for (const page of pages) {
    const last = page.groups[page.groups.length - 1];
    if (page.next !== null && last !== undefined) {
      const stop = groupCursor(last.group);
      if (knownThrough === null || stop < knownThrough) knownThrough = stop;
    }
    for (const g of page.groups) addCounts(merged, g);
  }
  const sorted = [...merged.entries()]
    .filter(([cursor]) => knownThrough === null || cursor <= knownThrough)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, counts]) => counts);
  if (limit !== undefined && sorted.length > limit) {
    const page = sorted.slice(0, limit);
    const last = page[page.length - 1];
    return { groups: page, next: last === undefined ? null : groupCursor(last.group) };
  }
  return { groups: sorted, next: knownThrough };
}

/** Adds one node's counts for a group into the merged entry. */
function addCounts(merged: Map<string, GroupCounts>, g: GroupCounts): void {
  const cursor = groupCursor(g.group);
  const sum: GroupCounts = merged.get(cursor) ?? { group: g.group, ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 0, paused: false };
  // A group's pause reaches every node; any node that reports it paused makes the merged entry paused.
  if (g.paused) {
    sum.paused = true;
    if (g.pausedUntilMs !== undefined) sum.pausedUntilMs = g.pausedUntilMs;
  }
  sum.ready += g.ready;
  sum.delayed += g.delayed;
  sum.waiting += g.waiting;
  sum.leased += g.leased;
  sum.dead += g.dead;
  merged.set(cursor, sum);
}
