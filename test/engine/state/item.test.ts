// Goal: a LiveItem's packed fields read back as set. Its state and its
// `requires` signature id share one number (item.ts keeps the item at 12
// fields), so every state change must keep the signature, and every
// signature id, however large the registry's counter grows, must keep the
// state; its heap membership is the pairing heap's mark, not a field; and
// the enqueue's record, held until its commit, needs no side object of its
// own unless the item has rarely used fields too. Its settings objects are
// shared through its engine's ItemSettingsTable, which stays bounded.

import { describe, expect, test } from "bun:test";
import type { LiveStateName } from "../../../src/engine/api.ts";
import { LiveItem } from "../../../src/engine/state/item.ts";
import { ItemSettingsTable } from "../../../src/engine/state/item-parts.ts";
import { itemSettingsSharedMax } from "../../../src/limits.ts";
import { Topic } from "../../../src/engine/ready/topic.ts";
import { PairingHeap } from "../../../src/lib/pairing-heap.ts";
import { itemRecord } from "../../storage/record-fixtures.ts";
import type { ItemRecord } from "../../../src/storage/record.ts";

const states: LiveStateName[] = ["ready", "delayed", "waiting", "leased", "dead"];
const topic = new Topic<LiveItem>("ns", "t");
const settingsTable = new ItemSettingsTable();
const settings = (r: ItemRecord) => settingsTable.forRecord(r);

describe("LiveItem's packed fields", () => {
  test("state and signature id: every state with small and huge signature ids, through every transition", () => {
    for (const signatureId of [0, 1, 7, 8, 65_535, 65_536, 2 ** 31, 2 ** 40 + 3]) {
      for (const initial of states) {
        const item = new LiveItem(2, 9, topic, signatureId, itemRecord(), settings(itemRecord()), initial, null);
        expect([item.state, item.signatureId]).toEqual([initial, signatureId]);
        for (const next of states) {
          item.state = next;
          expect([item.state, item.signatureId]).toEqual([next, signatureId]);
        }
      }
    }
  });

  test("heap membership follows insert, pop and remove; the item is its own heap value", () => {
    const heap = new PairingHeap<LiveItem>((a, b) => a.key < b.key);
    const items = [5, 3, 8].map((key) => new LiveItem(0, key, topic, 0, itemRecord(), settings(itemRecord()), "ready", null));
    expect(items.map((i) => i.inReadyHeap)).toEqual([false, false, false]);
    for (const item of items) heap.insertNode(item);
    expect(items.map((i) => i.inReadyHeap)).toEqual([true, true, true]);
    expect(heap.peekNode()?.value).toBe(items[1] as LiveItem);
    expect(heap.pop()).toBe(items[1] as LiveItem);
    heap.remove(items[2] as LiveItem);
    expect(items.map((i) => i.inReadyHeap)).toEqual([true, false, false]);
    heap.checkInvariants();
  });

  test("the uncommitted record: alone in the side slot, moved into extras when they appear, let go when stored", () => {
    const record = { ...itemRecord(), commit: null };
    const plain = new LiveItem(0, 1, topic, 0, record, settings(record), "ready", record);
    expect([plain.extras, plain.unstored, plain.committed]).toEqual([null, record, false]);
    plain.markStored();
    expect([plain.extras, plain.unstored, plain.committed]).toEqual([null, null, true]);

    const withTtl = new LiveItem(0, 2, topic, 0, { ...record, ttlExpiresAtMs: 5 }, settings(record), "ready", record);
    expect([withTtl.extras?.unstored, withTtl.unstored, withTtl.ttlExpiresAtMs]).toEqual([record, record, 5]);

    const later = new LiveItem(0, 3, topic, 0, record, settings(record), "ready", record);
    later.ensureExtras().deadReason = "r";
    expect([later.extras?.unstored, later.unstored, later.deadReason]).toEqual([record, record, "r"]);
    later.markStored();
    expect([later.unstored, later.deadReason, later.extras !== null]).toEqual([null, "r", true]);
    later.ensureExtras().deadReason = null;
    later.markStored();
    expect(later.extras).toBeNull();
  });
});

describe("ItemSettingsTable", () => {
  test("shares one object per combination, stops growing at itemSettingsSharedMax, and belongs to its engine alone", () => {
    const table = new ItemSettingsTable();
    const other = new ItemSettingsTable();
    expect(table.intern(1000, 3, "at_least_once")).toBe(table.intern(1000, 3, "at_least_once"));
    expect(table.intern(1000, 3, "at_least_once")).not.toBe(other.intern(1000, 3, "at_least_once"));
    // Client input picks the combinations: past the maximum each new one is an object of its own.
    for (let leaseMs = 1; leaseMs <= itemSettingsSharedMax + 50; leaseMs++) {
      const settings = table.intern(leaseMs, 1, "at_most_once");
      expect([settings.leaseMs, settings.maxAttempts, settings.delivery]).toEqual([leaseMs, 1, "at_most_once"]);
    }
    expect(table.size).toBe(itemSettingsSharedMax);
    expect(other.size).toBe(1);
    // An unshared combination asked again (another in between, past the one-entry `last`) is a new object; a shared one is not.
    const unshared = table.intern(itemSettingsSharedMax + 40, 1, "at_most_once");
    const shared = table.intern(1, 1, "at_most_once");
    expect(table.intern(itemSettingsSharedMax + 40, 1, "at_most_once")).not.toBe(unshared);
    expect(table.intern(1, 1, "at_most_once")).toBe(shared);
  });
});
