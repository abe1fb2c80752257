// Merging the `topics` pages of several cluster nodes into one page. Each
// node was asked for the same page (prefix, limit, after) and answers with its
// own topics in order; a node that has more stops at its last topic. Past the
// smallest such stop some node's topics are not known yet, so the merged page
// ends there (or at `limit`, if that comes first), and `next` says where the
// following page starts: the same cursor a single server gives.

import type { TopicCounts } from "./types.ts";

export interface TopicPage {
  topics: TopicCounts[];
  next: string | null;
}

export function mergeTopicPages(pages: readonly TopicPage[], limit?: number): TopicPage {
  const merged = new Map<string, TopicCounts>();
  let knownThrough: string | null = null;
  for (const page of pages) {
    const last = page.topics[page.topics.length - 1];
    if (page.next !== null && last !== undefined && (knownThrough === null || last.topic < knownThrough)) knownThrough = last.topic;
    for (const t of page.topics) addCounts(merged, t);
  }
  const sorted = [...merged.values()]
    .filter((t) => knownThrough === null || t.topic <= knownThrough)
    .sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
  if (limit !== undefined && sorted.length > limit) {
    const page = sorted.slice(0, limit);
    return { topics: page, next: page[page.length - 1]?.topic ?? null };
  }
  return { topics: sorted, next: knownThrough };
}

/** Adds one node's counts for a topic into the merged entry. */
function addCounts(merged: Map<string, TopicCounts>, t: TopicCounts): void {
  const sum: TopicCounts = merged.get(t.topic) ?? { topic: t.topic, ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 0, paused: false };
  // A pause reaches every node; any node that reports it paused makes the merged entry paused.
  if (t.paused) {
    sum.paused = true;
    if (t.pausedUntilMs !== undefined) sum.pausedUntilMs = t.pausedUntilMs;
  }
  sum.ready += t.ready;
  sum.delayed += t.delayed;
  sum.waiting += t.waiting;
  sum.leased += t.leased;
  sum.dead += t.dead;
  merged.set(t.topic, sum);
}
