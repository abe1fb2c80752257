// Goal: the table of retained outcomes finds an entry by id and by (shard,
// key), counts each key once, tells a replaced entry to its caller, and removes
// only the entry still filed (a stale retention deadline removes nothing).

import { expect, test } from "bun:test";
import { OutcomeTable, RetainedOutcome } from "../../../src/engine/outcomes/outcome-table.ts";

test("entries are found by id and by shard and key; malformed ids are missing", () => {
  const table = new OutcomeTable();
  const a = new RetainedOutcome(3, 17, "ns", "acked", 5);
  expect(table.set(a)).toBeUndefined();
  table.set(new RetainedOutcome(0, 17, "ns", "cancelled", 6));
  expect(table.size).toBe(2);
  expect(table.get("3:17")).toBe(a);
  expect(table.getByKey(3, 17)).toBe(a);
  expect(a.id).toBe("3:17");
  expect(table.get("0:17")?.outcome).toBe("cancelled");
  for (const missing of ["3:18", "4:17", "9:17", "03:17", "3:17:1", "x", ""]) expect(table.get(missing)).toBeUndefined();
});

test("a second entry under one key replaces the first; delete removes only the filed entry", () => {
  const table = new OutcomeTable();
  const first = new RetainedOutcome(1, 4, "ns", "expired", 1);
  const second = new RetainedOutcome(1, 4, "ns", "acked", 2);
  table.set(first);
  expect(table.set(second)).toBe(first);
  expect(table.size).toBe(1);
  table.delete(first);
  expect(table.get("1:4")).toBe(second);
  expect(table.size).toBe(1);
  table.delete(second);
  expect(table.get("1:4")).toBeUndefined();
  expect(table.size).toBe(0);
  table.delete(second);
  expect(table.size).toBe(0);
});
