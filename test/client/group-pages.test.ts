// Goal: mergeGroupPages, the cluster client's merge of every node's `groups`
// page: a group's counts summed when two nodes both report it (a shard in
// motion), a pause any node reports kept, the items without a group (null)
// first under the cursor "", and a `next` cursor that never skips a group some
// node has not listed yet. Checked against a model: paging through the merge
// with random page sizes gives exactly the per-group sums of every node's
// whole list.

import { describe, expect, test } from "bun:test";
import { mergeGroupPages } from "../../src/client/group-pages.ts";
import type { GroupCounts, GroupPage } from "../../src/client/types.ts";
import { seededRandom } from "../support/seeded-random.ts";

function counts(group: string | null, ready: number, extra: Partial<GroupCounts> = {}): GroupCounts {
  return { group, ready, delayed: 0, waiting: 0, leased: 0, dead: 0, paused: false, ...extra };
}

const cursorOf = (g: GroupCounts): string => g.group ?? "";

/** One node's page after `after`, at most `limit` groups, as a server answers (null group first, cursor ""). */
function nodePage(all: GroupCounts[], after: string | undefined, limit: number): GroupPage {
  const rest = all.filter((g) => after === undefined || cursorOf(g) > after);
  const groups = rest.slice(0, limit);
  return { groups, next: rest.length > limit ? cursorOf(groups[groups.length - 1]!) : null };
}

describe("mergeGroupPages", () => {
  test("sums a group two nodes report and keeps a pause any node reports", () => {
    const merged = mergeGroupPages([
      { groups: [counts(null, 2), counts("acme", 1, { leased: 1 })], next: null },
      { groups: [counts("acme", 3, { paused: true, pausedUntilMs: 5000 }), counts("globex", 4)], next: null },
    ]);
    expect(merged.next).toBeNull();
    expect(merged.groups).toEqual([
      counts(null, 2),
      counts("acme", 4, { leased: 1, paused: true, pausedUntilMs: 5000 }),
      counts("globex", 4),
    ]);
  });

  test("the null group sorts first whichever node lists it", () => {
    const merged = mergeGroupPages([
      { groups: [counts("b", 1)], next: null },
      { groups: [counts(null, 1), counts("a", 1)], next: null },
    ]);
    expect(merged.groups.map((g) => g.group)).toEqual([null, "a", "b"]);
  });

  test("a node with more pages bounds the merged page; the null group's cursor is the empty string", () => {
    const merged = mergeGroupPages([
      { groups: [counts(null, 1)], next: "" },
      { groups: [counts(null, 1), counts("a", 1)], next: null },
    ]);
    expect(merged.groups).toEqual([counts(null, 2)]);
    expect(merged.next).toBe("");
  });

  test("limit cuts the merged page and names its last group as the cursor: limit-1, limit, limit+1", () => {
    const page = { groups: [counts(null, 1), counts("a", 1), counts("b", 1)], next: null };
    expect(mergeGroupPages([page], 2)).toEqual({ groups: [counts(null, 1), counts("a", 1)], next: "a" });
    expect(mergeGroupPages([page], 3)).toEqual({ groups: page.groups, next: null });
    expect(mergeGroupPages([page], 4)).toEqual({ groups: page.groups, next: null });
    expect(mergeGroupPages([page], 1)).toEqual({ groups: [counts(null, 1)], next: "" });
  });

  test("paging through the merge gives every group once with its summed counts (seeded model)", () => {
    const random = seededRandom(51);
    for (let run = 0; run < 50; run++) {
      const names = [null, ...Array.from({ length: 1 + Math.floor(random() * 30) }, (_, i) => `g${String(i).padStart(2, "0")}`)];
      const nodes: GroupCounts[][] = Array.from({ length: 1 + Math.floor(random() * 4) }, () =>
        names.filter(() => random() < 0.5).map((name) => counts(name, 1 + Math.floor(random() * 5))),
      );
      const expected = new Map<string, number>();
      for (const node of nodes) for (const g of node) expected.set(cursorOf(g), (expected.get(cursorOf(g)) ?? 0) + g.ready);
      const seen = new Map<string, number>();
      let after: string | undefined;
      for (let pages = 0; pages < 1000; pages++) {
        const limit = 1 + Math.floor(random() * 5);
        const merged = mergeGroupPages(nodes.map((node) => nodePage(node, after, limit)), limit);
        for (const g of merged.groups) {
          expect(seen.has(cursorOf(g))).toBe(false);
          seen.set(cursorOf(g), g.ready);
        }
        if (merged.next === null) break;
        after = merged.next;
      }
      expect(seen).toEqual(expected);
    }
  });
});
