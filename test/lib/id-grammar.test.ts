// Goal: the one parser of ids and receipts reads exactly the grammar: each
// number canonical decimal (digits only, no sign, no leading zero but "0"
// itself) below 2^53, deliveries and boot from 1. It refuses what Number()
// would read (" 1", "1e1", "+1", "0x1", "") and numbers past 2^53 - 1, and
// on random texts its three readers agree with a regular-expression
// statement of the grammar.

import { describe, expect, test } from "bun:test";
import { parseId, ReceiptFields, readReceipt, shardOfIdOrReceipt } from "../../src/lib/id-grammar.ts";
import { malformedIds, malformedReceipts } from "../support/malformed-ids.ts";
import { seededRandom } from "../support/seeded-random.ts";

const max = Number.MAX_SAFE_INTEGER;

function receiptOf(text: string): ReceiptFields | null {
  const fields = new ReceiptFields();
  return readReceipt(text, fields) ? fields : null;
}

describe("well-formed ids and receipts", () => {
  test("parse to their numbers, 0 and 2^53 - 1 included", () => {
    expect(parseId("3:17")).toEqual({ shard: 3, key: 17 });
    expect(parseId("0:0")).toEqual({ shard: 0, key: 0 });
    expect(parseId(`${max}:${max}`)).toEqual({ shard: max, key: max });
    expect({ ...receiptOf("3:17:2:5") }).toEqual({ shard: 3, key: 17, deliveries: 2, boot: 5 });
    expect({ ...receiptOf(`0:${max}:1:${max}`) }).toEqual({ shard: 0, key: max, deliveries: 1, boot: max });
  });

  test("name their shard, ids and receipts alike", () => {
    expect(shardOfIdOrReceipt("3:17")).toBe(3);
    expect(shardOfIdOrReceipt("12:5:1:2")).toBe(12);
    expect(shardOfIdOrReceipt("0:0")).toBe(0);
    expect(shardOfIdOrReceipt(`${max}:0:1:1`)).toBe(max);
  });
});

describe("malformed texts", () => {
  test('what Number() reads is refused: " 1", "1e1", "+1", "0x1", "" and 2^53', () => {
    for (const bad of [" 1", "1e1", "+1", "0x1", "", "9007199254740992", "1 ", "01"]) {
      expect(parseId(`${bad}:5`)).toBeNull();
      expect(parseId(`5:${bad}`)).toBeNull();
      expect(receiptOf(`${bad}:5:1:1`)).toBeNull();
      expect(receiptOf(`5:5:1:${bad}`)).toBeNull();
      expect(shardOfIdOrReceipt(`${bad}:5`)).toBeNull();
      expect(shardOfIdOrReceipt(`5:${bad}`)).toBeNull();
      expect(shardOfIdOrReceipt(`5:5:${bad}:1`)).toBeNull();
    }
  });

  test("no id is read from a malformed id, and no shard", () => {
    for (const bad of malformedIds) {
      expect(parseId(bad)).toBeNull();
      expect(shardOfIdOrReceipt(bad)).toBeNull();
    }
  });

  test("no receipt is read from a malformed receipt (an id is not one), and no shard", () => {
    for (const bad of [...malformedReceipts, "1:5"]) expect(receiptOf(bad)).toBeNull();
    for (const bad of malformedReceipts) expect(shardOfIdOrReceipt(bad)).toBeNull();
  });
});

/** The grammar as regular expressions over BigInt, independent of the parser's scanning. */
const decimal = "(0|[1-9][0-9]*)";
const idPattern = new RegExp(`^${decimal}:${decimal}$`);
const receiptPattern = new RegExp(`^${decimal}:${decimal}:${decimal}:${decimal}$`);

function numbersOf(pattern: RegExp, text: string): number[] | null {
  const match = pattern.exec(text);
  if (match === null) return null;
  const values = match.slice(1).map((digits) => BigInt(digits));
  return values.every((value) => value <= BigInt(max)) ? values.map(Number) : null;
}

/** A random text near the grammar: one to five parts, each a number, a number past 2^53 - 1 or a few odd characters, sometimes with one character inserted. */
function randomText(random: () => number): string {
  const odd = ["0", "1", "9", ":", " ", "+", "-", "e", "x", ".", ""];
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const parts: string[] = [];
  const count = 1 + Math.floor(random() * 5);
  for (let i = 0; i < count; i++) {
    const kind = random();
    if (kind < 0.6) parts.push(String(Math.floor(random() * (random() < 0.5 ? 3 : 100_000))));
    else if (kind < 0.7) parts.push(pick([String(max), "9007199254740992", "10000000000000000", "0000"]));
    else parts.push(pick(odd) + pick(odd));
  }
  let text = parts.join(":");
  if (random() < 0.2) {
    const at = Math.floor(random() * (text.length + 1));
    text = text.slice(0, at) + pick(odd) + text.slice(at);
  }
  return text;
}

test("on random texts the parser agrees with the grammar's regular expressions", () => {
  const seed = 20261201;
  const random = seededRandom(seed);
  let ids = 0;
  let receipts = 0;
  for (let round = 0; round < 50_000; round++) {
    const text = randomText(random);
    const id = numbersOf(idPattern, text);
    const receiptNumbers = numbersOf(receiptPattern, text);
    const receipt = receiptNumbers !== null && receiptNumbers[2]! >= 1 && receiptNumbers[3]! >= 1 ? receiptNumbers : null;
    const context = `seed ${seed}, text ${JSON.stringify(text)}`;
    expect(parseId(text), context).toEqual(id === null ? null : { shard: id[0]!, key: id[1]! });
    const fields = receiptOf(text);
    expect(fields === null ? null : [fields.shard, fields.key, fields.deliveries, fields.boot], context).toEqual(receipt);
    expect(shardOfIdOrReceipt(text), context).toBe(id?.[0] ?? receipt?.[0] ?? null);
    if (id !== null) ids++;
    if (receipt !== null) receipts++;
  }
  // The texts reach both forms, not only malformed ones.
  expect(ids).toBeGreaterThan(1_000);
  expect(receipts).toBeGreaterThan(1_000);
});
