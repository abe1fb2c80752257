// Goal: the item table finds every live item by its id and nothing else (not
// an id with the right key on another shard, not a removed item, not a
// malformed id), keeps finding them across the compactions that removals
// trigger (below, at and above the compaction threshold), and refuses a key
// that does not grow within its shard.

import { describe, expect, test } from "bun:test";
import { AssertionError } from "../../../src/lib/assert.ts";
import { formatId } from "../../../src/engine/state/ids.ts";
import { LiveItem } from "../../../src/engine/state/item.ts";
import { ItemSettingsTable } from "../../../src/engine/state/item-parts.ts";
import { ItemTable } from "../../../src/engine/state/item-table.ts";
import { Topic } from "../../../src/engine/ready/topic.ts";
import { itemRecord } from "../../storage/record-fixtures.ts";
import { seededRandom } from "../../support/seeded-random.ts";

const topic = new Topic<LiveItem>("ns", "t");
const settingsTable = new ItemSettingsTable();
const settings = (r: { leaseMs: number; maxAttempts: number; delivery: "at_least_once" | "at_most_once" }) => settingsTable.intern(r.leaseMs, r.maxAttempts, r.delivery);

function item(shard: number, key: number): LiveItem {
  return new LiveItem(shard, key, topic, 0, itemRecord(), settings(itemRecord()), "ready", null);
}

/** Whether `table` holds exactly `live` (by id and by iteration). */
function expectExactly(table: ItemTable, live: LiveItem[], gone: LiveItem[]): void {
  table.checkInvariants();
  expect(table.size).toBe(live.length);
  for (const it of live) {
    expect(table.get(it.id)).toBe(it);
    expect(table.holds(it)).toBe(true);
  }
  for (const it of gone) {
    expect(table.get(it.id)).toBeUndefined();
    expect(table.holds(it)).toBe(false);
  }
  const listed = [...table.values()];
  expect(listed.length).toBe(live.length);
  expect(new Set(listed)).toEqual(new Set(live));
  expect([...table].map(([id]) => id).sort()).toEqual(live.map((it) => it.id).sort());
}

describe("item table", () => {
  test("lookups by id: the shard must match, malformed and unknown ids are missing", () => {
    const table = new ItemTable();
    const a = item(0, 1);
    const b = item(2, 2);
    const c = item(0, 5);
    for (const it of [a, b, c]) table.add(it);
    expectExactly(table, [a, b, c], []);
    expect(table.get("1:1")).toBeUndefined();
    expect(table.get("2:1")).toBeUndefined();
    expect(table.get("9:1")).toBeUndefined();
    expect(table.get("0:3")).toBeUndefined();
    for (const bad of ["", "0", "0:", "x:1", "0:01", "0:1:1"]) expect(table.get(bad)).toBeUndefined();
    // Another object with the same id is not the filed item.
    expect(table.holds(item(0, 1))).toBe(false);
  });

  test("a key filed twice is refused; a lower key (cluster mode: a shard adopted from a node with higher keys) is filed in order", () => {
    const table = new ItemTable();
    table.add(item(0, 10));
    expect(() => table.add(item(0, 10))).toThrow(AssertionError);
    const nine = item(0, 9);
    table.add(nine);
    table.add(item(1, 3));
    table.add(item(0, 11));
    const five = item(0, 5);
    table.add(five);
    expect(table.size).toBe(5);
    expect(table.get("0:9")).toBe(nine);
    expect(table.get("0:5")).toBe(five);
    expect(table.get("0:10")?.key).toBe(10);
    table.delete(nine);
    expect(table.get("0:9")).toBeUndefined();
    expect(table.get("0:10")?.key).toBe(10);
    expect(() => table.add(item(0, 5))).toThrow(AssertionError);
    table.checkInvariants();
  });

  for (const count of [63, 64, 65, 1000]) {
    test(`${count} items removed in every order keep the rest findable (compaction at 64 slots)`, () => {
      for (const order of ["oldest first", "newest first", "every other, then the rest"]) {
        const table = new ItemTable();
        const all: LiveItem[] = [];
        for (let key = 1; key <= count; key++) {
          const it = item(key % 3, key);
          all.push(it);
          table.add(it);
        }
        let removeOrder = [...all];
        if (order === "newest first") removeOrder.reverse();
        if (order === "every other, then the rest") removeOrder = [...all.filter((_, i) => i % 2 === 0), ...all.filter((_, i) => i % 2 === 1)];
        const gone: LiveItem[] = [];
        for (let i = 0; i < removeOrder.length; i++) {
          const it = removeOrder[i] as LiveItem;
          table.delete(it);
          table.delete(it);
          gone.push(it);
          if (i % 17 === 0 || i === removeOrder.length - 1) {
            const goneSet = new Set(gone);
            expectExactly(table, all.filter((x) => !goneSet.has(x)), gone.slice(-5));
          }
        }
        expect(table.size).toBe(0);
        // Keys keep growing after everything left: the shard accepts the next ones.
        const next = item(0, count * 3 + 3);
        table.add(next);
        expectExactly(table, [next], []);
      }
    });
  }

  test("removing an item not filed (never added, or another object with its id) changes nothing", () => {
    const table = new ItemTable();
    const a = item(0, 1);
    table.add(a);
    table.delete(item(0, 1));
    table.delete(item(5, 1));
    table.delete(item(0, 2));
    expectExactly(table, [a], []);
    expect(formatId(0, 1)).toBe(a.id);
  });

  test("lowestKey is each shard's lowest live key (Infinity when none) through random adds, removals, lower-key inserts and compactions", () => {
    for (let seed = 1; seed <= 30; seed++) {
      const random = seededRandom(seed);
      const table = new ItemTable();
      const live = new Map<number, LiveItem[]>();
      const nextKey = [1000, 1000, 1000];
      for (let step = 0; step < 600; step++) {
        const shard = Math.floor(random() * 3);
        const items = live.get(shard) ?? [];
        live.set(shard, items);
        const choice = random();
        if (choice < 0.5 || items.length === 0) {
          // Mostly new, higher keys; now and then a lower one (cluster mode's adopted shard).
          const lower = random() < 0.05 ? Math.floor(random() * 1000) : -1;
          const key = lower >= 0 && !items.some((it) => it.key === lower) ? lower : nextKey[shard]!++;
          const it = item(shard, key);
          table.add(it);
          items.push(it);
        } else {
          // Removals lean towards the oldest, as a queue's acks do, so leading holes pile up.
          const sorted = [...items].sort((a, b) => a.key - b.key);
          const at = random() < 0.6 ? 0 : Math.floor(random() * sorted.length);
          const gone = sorted[at]!;
          table.delete(gone);
          items.splice(items.indexOf(gone), 1);
        }
        for (let s = 0; s < 4; s++) {
          const keys = (live.get(s) ?? []).map((it) => it.key);
          const expected = keys.length === 0 ? Infinity : Math.min(...keys);
          if (table.lowestKey(s) !== expected) throw new Error(`seed ${seed} step ${step}: shard ${s} lowestKey ${table.lowestKey(s)}, expected ${expected}`);
        }
        table.checkInvariants();
      }
    }
  });

  test("finds every key and no other however the keys are spread (even, clustered in far ranges as cluster nodes' are, geometric), with holes", () => {
    const random = seededRandom(77);
    const spreads: Array<(i: number) => number> = [
      (i) => i * 16 + 3,
      (i) => (i < 300 ? 1 + i : 1_000_000_000 + i * 7),
      (i) => Math.floor(1.05 ** i) + i,
    ];
    for (const spread of spreads) {
      const table = new ItemTable();
      const live: LiveItem[] = [];
      for (let i = 0; i < 600; i++) {
        const it = item(2, spread(i));
        table.add(it);
        live.push(it);
      }
      // Holes: a third removed (below the compaction threshold's ratio, so they stay as holes).
      const gone: LiveItem[] = [];
      for (let i = live.length - 1; i >= 0; i--) {
        if (random() < 0.3) {
          const [it] = live.splice(i, 1);
          table.delete(it as LiveItem);
          gone.push(it as LiveItem);
        }
      }
      expectExactly(table, live, gone);
      // Keys between, below and above the filed ones are missing.
      const filed = new Set([...live, ...gone].map((it) => it.key));
      for (let probe = 0; probe < 2000; probe++) {
        const key = Math.floor(random() * (spread(600) + 10));
        if (filed.has(key)) continue;
        expect(table.getByKey(2, key)).toBeUndefined();
      }
    }
  });
});
