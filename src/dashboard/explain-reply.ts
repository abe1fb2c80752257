// One item's entry of the `explain` op (PROTOCOL.md, "Fair sharing and
// limits"), read with its types checked: the item's state and the reasons it
// is not being delivered right now, each a name and the details that name
// carries. A reason this dashboard does not know keeps its raw map, so a
// newer server's reason is still shown.

import { numberField, stringField, stringList, wireMaps, isWireMap, type WireMap } from "./wire-values.ts";

export interface ExplainReason {
  reason: string;
  /** delayed, leased, topic_paused, group_paused, held_for_preferred: when it ends (absent for a pause with no end). */
  untilMs?: number;
  /** waiting: the dependencies not acked yet. */
  after: string[];
  /** dead: the item's dead_reason. */
  deadReason?: string;
  /** topic_max_leased, group_max_leased: leased now, and the bound. */
  leased?: number;
  max?: number;
  /** topic_rate, group_rate: when the next token comes. */
  nextAtMs?: number;
  /** no_worker: per worker kind that asked, the constraints the item fails for it. */
  kinds: string[][];
  /** behind: items that go first (counted up to 1,000). */
  ahead?: number;
  raw: WireMap;
}

export interface ExplainEntry {
  id: string;
  state: string;
  reasons: ExplainReason[];
}

function reasonFrom(map: WireMap): ExplainReason {
  const reason: ExplainReason = {
    reason: stringField(map, "reason") ?? "unknown",
    after: stringList(map, "after"),
    kinds: wireMaps(map.kinds).map((kind) => stringList(kind, "failed")),
    raw: map,
  };
  const untilMs = numberField(map, "until_ms");
  const deadReason = stringField(map, "dead_reason");
  const leased = numberField(map, "leased");
  const max = numberField(map, "max");
  const nextAtMs = numberField(map, "next_at_ms");
  const ahead = numberField(map, "ahead");
  if (untilMs !== undefined) reason.untilMs = untilMs;
  if (deadReason !== undefined) reason.deadReason = deadReason;
  if (leased !== undefined) reason.leased = leased;
  if (max !== undefined) reason.max = max;
  if (nextAtMs !== undefined) reason.nextAtMs = nextAtMs;
  if (ahead !== undefined) reason.ahead = ahead;
  return reason;
}

/** The first entry of an `explain` reply (the dashboard asks for one id), or null for an item the server no longer holds. */
export function explainEntryFrom(reply: WireMap): ExplainEntry | null {
  const items = reply.items;
  const entry = Array.isArray(items) ? items[0] : undefined;
  if (!isWireMap(entry)) return null;
  return {
    id: stringField(entry, "id") ?? "",
    state: stringField(entry, "state") ?? "",
    reasons: wireMaps(entry.reasons).map(reasonFrom),
  };
}
