// Goal: ids and receipts round-trip, and malformed text parses to null (so an
// id counts as missing and a receipt as stale) rather than throwing. A
// receipt names the item, its delivery count and the boot of its lease; the
// three-part receipts of earlier builds are malformed now (stale).

import { expect, test } from "bun:test";
import { formatId, formatReceipt, parseId, parseReceipt, ReceiptFields, ReceiptFormat, readReceipt } from "../../../src/engine/state/ids.ts";
import { malformedIds, malformedReceipts } from "../../support/malformed-ids.ts";

test("round trip", () => {
  const id = formatId(3, 17);
  expect(id).toBe("3:17");
  expect(parseId(id)).toEqual({ shard: 3, key: 17 });
  expect(formatReceipt(id, 2, 5)).toBe("3:17:2:5");
  expect(parseReceipt(formatReceipt(id, 2, 5))).toEqual({ id, deliveries: 2, boot: 5 });
  expect(parseId(formatId(0, Number.MAX_SAFE_INTEGER))).toEqual({ shard: 0, key: Number.MAX_SAFE_INTEGER });
  const max = Number.MAX_SAFE_INTEGER;
  expect(parseReceipt(formatReceipt(formatId(max, max), 0xffff_ffff, 0xffff_ffff))).toEqual({ id: `${max}:${max}`, deliveries: 0xffff_ffff, boot: 0xffff_ffff });
});

test("ids and receipts built from kept prefixes and tails read as whole templates would, across boots and past the kept counts", () => {
  for (const shard of [0, 9, 10, 1023, 1024, 4095]) {
    for (const key of [0, 7, 123_456, Number.MAX_SAFE_INTEGER]) expect(formatId(shard, key)).toBe(`${shard}:${key}`);
  }
  // Two engines in one process, their calls interleaved: each keeps its own tails, so each receipt names its own boot.
  const engines = [new ReceiptFormat(1), new ReceiptFormat(2), new ReceiptFormat(0xffff_ffff)];
  for (let round = 0; round < 2; round++) {
    for (const deliveries of [0, 1, 9, 63, 64, 1000]) {
      for (const receipts of engines) {
        const receipt = receipts.format("3:17", deliveries, receipts.boot);
        expect(receipt).toBe(`3:17:${deliveries}:${receipts.boot}`);
        expect(receipt).toBe(formatReceipt("3:17", deliveries, receipts.boot));
        // A lease of another boot (a revert's comparison) is built whole, never from this engine's tails.
        expect(receipts.format("3:17", deliveries, 7)).toBe(`3:17:${deliveries}:7`);
      }
    }
  }
});

test("receipts differing only in boot are different receipts", () => {
  expect(formatReceipt("1:1", 1, 1)).not.toBe(formatReceipt("1:1", 1, 2));
});

test("malformed ids and receipts are null", () => {
  for (const bad of ["", ":", "3", "3:", ":3", "a:1", "1:b", "01:1", "1:01", "-1:1", "1:1.5", "1:1:1", " 1:1", "1:99999999999999999"]) {
    expect(parseId(bad)).toBeNull();
  }
  const badReceipts = [
    "",
    ":",
    ":::",
    "1:1",
    // The earlier three-part form, without a boot.
    "1:1:1",
    "1:1:1:",
    "1:1::1",
    "1:1:0:1",
    "1:1:1:0",
    "1:1:01:1",
    "1:1:1:01",
    "x:1:1:1",
    "1:1:1:1:1",
    "1:1:-1:1",
    "1:1:1:-1",
    "1:1:1:1 ",
    "1:1:1:99999999999999999",
  ];
  for (const bad of badReceipts) expect(parseReceipt(bad)).toBeNull();
  // The non-allocating reader the ack path uses refuses the same texts.
  const fields = new ReceiptFields();
  for (const bad of badReceipts) expect(readReceipt(bad, fields)).toBe(false);
});

test("what Number() would read is malformed too: whitespace, exponents, signs, hex, empty parts, 2^53", () => {
  for (const bad of malformedIds) expect(parseId(bad)).toBeNull();
  const fields = new ReceiptFields();
  for (const bad of malformedReceipts) {
    expect(parseReceipt(bad)).toBeNull();
    expect(readReceipt(bad, fields)).toBe(false);
  }
});

test("readReceipt fills a reused scratch with the receipt's numbers", () => {
  const fields = new ReceiptFields();
  expect(readReceipt("3:17:2:5", fields)).toBe(true);
  expect({ ...fields }).toEqual({ shard: 3, key: 17, deliveries: 2, boot: 5 });
  expect(readReceipt("0:0:1:1", fields)).toBe(true);
  expect({ ...fields }).toEqual({ shard: 0, key: 0, deliveries: 1, boot: 1 });
});

test("formatId writes the canonical decimal of every digit count, near 2^53 included", () => {
  // Keys whose tenth lies just below an integer: a division rounded to the nearest double would carry into the next digit there.
  const keys = [0, 9, 10, 99, 100, 1234567890, 2 ** 50 - 1, 2 ** 52 + 9, Number.MAX_SAFE_INTEGER - 10, Number.MAX_SAFE_INTEGER];
  for (let key = 1; key <= Number.MAX_SAFE_INTEGER; key *= 10) keys.push(key, Math.min(key * 10 - 1, Number.MAX_SAFE_INTEGER));
  for (const shard of [0, 7, 10, 255, 65535]) {
    for (const key of keys) {
      expect(formatId(shard, key)).toBe(`${shard}:${BigInt(key)}`);
      expect(parseId(formatId(shard, key))).toEqual({ shard, key });
    }
  }
});
