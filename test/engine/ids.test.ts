// Goal: ids and receipts round-trip, and malformed text parses to null (so an
// id counts as missing and a receipt as stale) rather than throwing.

import { expect, test } from "bun:test";
import { formatId, formatReceipt, parseId, parseReceipt } from "../../src/engine/ids.ts";

test("round trip", () => {
  const id = formatId(3, 17);
  expect(id).toBe("3:17");
  expect(parseId(id)).toEqual({ shard: 3, key: 17 });
  expect(parseReceipt(formatReceipt(id, 2))).toEqual({ id, deliveries: 2 });
  expect(parseId(formatId(0, Number.MAX_SAFE_INTEGER))).toEqual({ shard: 0, key: Number.MAX_SAFE_INTEGER });
});

test("malformed ids and receipts are null", () => {
  for (const bad of ["", ":", "3", "3:", ":3", "a:1", "1:b", "01:1", "1:01", "-1:1", "1:1.5", "1:1:1", " 1:1", "1:99999999999999999"]) {
    expect(parseId(bad)).toBeNull();
  }
  for (const bad of ["", "1:1", "1:1:", "1:1:0", "1:1:01", "x:1:1", "1:1:1:1", "1:1:-1"]) {
    expect(parseReceipt(bad)).toBeNull();
  }
});
