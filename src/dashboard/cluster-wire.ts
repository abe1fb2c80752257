// The cluster client's merged answers (camelCase types, src/client/types.ts)
// turned back into the wire form the pages read (snake_case, as a node's own
// reply), so a page cannot tell a merged reply from one node's. Each is the
// inverse of the client's own conversion from the wire (item-wire.ts,
// fair-sharing-wire.ts, client.ts's topics): absent fields stay absent.

import type { TopicPage } from "../client/topic-pages.ts";
import type { GroupPage, ItemPage, ItemState } from "../client/types.ts";
/** A reply map being built (wire-values.ts reads them read-only). */
type WireMap = Record<string, unknown>;

export function itemStateToWire(item: ItemState): WireMap {
  const wire: WireMap = {
    id: item.id,
    topic: item.topic,
    state: item.state,
    priority: item.priority,
    payload: item.payload,
    metadata: item.metadata,
    attempt: item.attempt,
    deliver_at_ms: item.deliverAtMs,
    enqueued_at_ms: item.enqueuedAtMs,
  };
  const optional: Array<[string, unknown]> = [
    ["lease_expires_at_ms", item.leaseExpiresAtMs],
    ["requires", item.requires],
    ["after", item.after],
    ["key", item.key],
    ["group", item.group],
    ["prefers", item.prefers],
    ["prefer_wait_ms", item.preferWaitMs],
    ["trace", item.trace],
    ["dead_reason", item.deadReason],
  ];
  for (const [name, value] of optional) if (value !== undefined) wire[name] = value;
  return wire;
}

export function itemPageToWire(page: ItemPage): WireMap {
  return { items: page.items.map(itemStateToWire), next: page.next };
}

/** A topic's or a group's counts and pause, as `topics` and `groups` spell them. */
function countsToWire(counts: { ready: number; delayed: number; waiting: number; leased: number; dead: number; paused: boolean; pausedUntilMs?: number }): WireMap {
  const wire: WireMap = { ready: counts.ready, delayed: counts.delayed, waiting: counts.waiting, leased: counts.leased, dead: counts.dead, paused: counts.paused };
  if (counts.pausedUntilMs !== undefined) wire.paused_until_ms = counts.pausedUntilMs;
  return wire;
}

export function topicPageToWire(page: TopicPage): WireMap {
  return { topics: page.topics.map((t) => ({ topic: t.topic, ...countsToWire(t) })), next: page.next };
}

export function groupPageToWire(page: GroupPage): WireMap {
  return { groups: page.groups.map((g) => ({ group: g.group, ...countsToWire(g) })), next: page.next };
}
