// A topic's groups as the topic page lists them: read from the `groups` op
// (name order, a page at a time, up to groupsReadMax), then sorted by name
// or by backlog. Backlog is ready + delayed + waiting: the items a group
// still has to deliver, the number that tells which tenant is behind.

import type { Session } from "../server/op-types.ts";
import type { OpCaller } from "./op-caller.ts";
import { readPages } from "./op-pages.ts";
import { numberField, stringField, type WireMap } from "./wire-values.ts";

/**
 * Groups read per page view (5,000): at most five `groups` calls per
 * refresh, and enough for every group of most topics; a topic with more is
 * sorted among its first 5,000 by name, and the page says so.
 */
export const groupsReadMax = 5000;

export interface GroupRow {
  /** null: the items enqueued without a group (the contract's nil group). */
  group: string | null;
  ready: number;
  delayed: number;
  waiting: number;
  leased: number;
  paused: boolean;
  /** Set when the pause has an end. */
  pausedUntilMs?: number;
}

const groupSortKeys = ["group", "backlog"] as const;
export type GroupSortKey = (typeof groupSortKeys)[number];

export function isGroupSortKey(value: string | null): value is GroupSortKey {
  return (groupSortKeys as readonly (string | null)[]).includes(value);
}

export function groupRowFrom(entry: WireMap): GroupRow {
  const row: GroupRow = {
    group: stringField(entry, "group") ?? null,
    ready: numberField(entry, "ready") ?? 0,
    delayed: numberField(entry, "delayed") ?? 0,
    waiting: numberField(entry, "waiting") ?? 0,
    leased: numberField(entry, "leased") ?? 0,
    paused: entry.paused === true,
  };
  const until = numberField(entry, "paused_until_ms");
  if (until !== undefined) row.pausedUntilMs = until;
  return row;
}

export function backlog(row: GroupRow): number {
  return row.ready + row.delayed + row.waiting;
}

/**
 * Rows in the asked order. By name, the op's own order is kept (the nil
 * group first, then UTF-8 byte order); by backlog, equal backlogs keep that
 * name order whichever the direction, so a sort never shuffles ties.
 */
export function sortGroups(rows: readonly GroupRow[], key: GroupSortKey, descending: boolean): GroupRow[] {
  const indexed = rows.map((row, index) => ({ row, index }));
  indexed.sort((a, b) => {
    const byKey = key === "backlog" ? backlog(a.row) - backlog(b.row) : a.index - b.index;
    if (byKey !== 0) return descending ? -byKey : byKey;
    return a.index - b.index;
  });
  return indexed.map(({ row }) => row);
}

export async function readGroups(ops: OpCaller, session: Session, ns: string, topic: string): Promise<{ rows: GroupRow[]; complete: boolean }> {
  const { entries, complete } = await readPages(ops, session, "groups", { ns, topic }, "groups", groupsReadMax);
  return { rows: entries.map(groupRowFrom), complete };
}
