// Goal: the delivery read-ahead (src/engine/ready/read-ahead.ts) saves the next
// dequeue its store read when it guessed right, and is never used when what
// the store holds may have changed since it read: a commit in flight or
// landed in between, another item taken first. Deliveries carry the right
// bytes in every case.

import { describe, expect, test } from "bun:test";
import { ReadAheadReader } from "../../../src/engine/ready/read-ahead.ts";
import type { ItemKey } from "../../../src/storage/store.ts";
import { Harness, item, unwrap } from "../support/harness.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (value: Uint8Array) => new TextDecoder().decode(value);

/** A harness whose store counts its reads of item values (copies and views: a delivery reads a view where the store offers one). */
function countingHarness(): { h: Harness; reads: () => number } {
  const h = new Harness({ shards: 2 });
  let count = 0;
  const store = h.store;
  const read = store.readItemBytes.bind(store);
  store.readItemBytes = (shard: number, key: ItemKey) => {
    count++;
    return read(shard, key);
  };
  const view = store.viewItemBytes?.bind(store);
  if (view === undefined) throw new Error("the harness's store offers no views");
  store.viewItemBytes = (shard: number, key: ItemKey) => {
    count++;
    return view(shard, key);
  };
  return { h, reads: () => count };
}

describe("delivery read-ahead, in the engine", () => {
  test("a dequeue after an ack's commit lands takes the item read ahead, without a store read of its own", async () => {
    const { h, reads } = countingHarness();
    await h.enqueue("n", [0, 1, 2].map((i) => item("t", { payload: bytes(`p${i}`), priority: i })));
    const [d0] = await h.dequeue("n", [["t", 1]]);
    expect(text(d0!.payload)).toBe("p0");

    const beforeAck = reads();
    await h.settleAck(h.engine.ack("n", [d0!.receipt], h.now));
    // The ack's commit landed and nothing else waited: p1 was read then.
    expect(reads()).toBe(beforeAck + 1);

    const beforeDequeue = reads();
    const [d1] = await h.dequeue("n", [["t", 1]]);
    expect(text(d1!.payload)).toBe("p1");
    expect(reads()).toBe(beforeDequeue);
    h.check();
  });

  test("a commit in flight between the read-ahead and the dequeue: the dequeue reads the store", async () => {
    const { h, reads } = countingHarness();
    await h.enqueue("n", [0, 1].map((i) => item("t", { payload: bytes(`p${i}`), priority: i })));
    const [d0] = await h.dequeue("n", [["t", 1]]);
    await h.settleAck(h.engine.ack("n", [d0!.receipt], h.now));

    // Another write starts a commit and is held in flight.
    h.store.pauseCommits();
    const held = unwrap(h.engine.enqueue("n", [item("u", { payload: bytes("other") })], h.now));
    await Bun.sleep(1);
    const before = reads();
    const [d1] = await h.dequeue("n", [["t", 1]]);
    expect(text(d1!.payload)).toBe("p1");
    expect(reads()).toBe(before + 1);
    h.store.resumeCommits();
    await held.durable;
    h.check();
  });

  test("a nack's metadata wins over the value read ahead, and a different item taken first reads the store", async () => {
    const { h, reads } = countingHarness();
    await h.enqueue("n", [item("t", { payload: bytes("a"), metadata: bytes("first"), priority: 0 }), item("t", { payload: bytes("b"), priority: 5 }), item("v", { payload: bytes("c") })]);
    const [a] = await h.dequeue("n", [["t", 1]]);
    await h.settle(h.engine.nack("n", [{ receipt: a!.receipt, delayMs: null, metadata: bytes("second") }], h.now));
    // The nack's commit landed: "a" (ready again, still the best of t) was read ahead.
    const [again] = await h.dequeue("n", [["t", 1]]);
    expect(text(again!.payload)).toBe("a");
    expect(text(again!.metadata)).toBe("second");
    await h.settleAck(h.engine.ack("n", [again!.receipt], h.now));

    // "b" is read ahead for t; a dequeue of v takes another item and reads it from the store.
    const before = reads();
    const [c] = await h.dequeue("n", [["v", 1]]);
    expect(text(c!.payload)).toBe("c");
    expect(reads()).toBe(before + 1);
    h.check();
  });
});

describe("ReadAheadReader", () => {
  function fixture() {
    const values = new Map<string, Uint8Array>([["0:1", bytes("one")], ["0:2", bytes("two")]]);
    const asked: string[] = [];
    const store = {
      readItemBytes(shard: number, key: ItemKey): Uint8Array | null {
        asked.push(`${shard}:${key}`);
        const value = values.get(`${shard}:${key}`);
        return value === undefined ? null : value.slice();
      },
      readItem: () => null,
    };
    const writer = { commitGeneration: 0 };
    return { reader: new ReadAheadReader(store, writer), writer, asked };
  }

  test("reads nothing while a commit is in flight (odd generation)", () => {
    const { reader, writer, asked } = fixture();
    writer.commitGeneration = 3;
    reader.readAhead(0, 1);
    expect(asked).toEqual([]);
    expect(text(reader.readItemBytes(0, 1)!)).toBe("one");
    expect(asked).toEqual(["0:1"]);
    expect(reader.hits).toBe(0);
  });

  test("hands the value out once, and only while the generation has not moved", () => {
    const { reader, writer, asked } = fixture();
    reader.readAhead(0, 1);
    expect(asked).toEqual(["0:1"]);
    expect(text(reader.readItemBytes(0, 1)!)).toBe("one");
    expect(reader.hits).toBe(1);
    // Handed out: the next read goes to the store.
    reader.readItemBytes(0, 1);
    expect(asked).toEqual(["0:1", "0:1"]);

    reader.readAhead(0, 2);
    writer.commitGeneration = 2;
    reader.readItemBytes(0, 2);
    expect(asked).toEqual(["0:1", "0:1", "0:2", "0:2"]);
    expect(reader.hits).toBe(1);
  });

  test("a read of another key leaves the value for its own read; a new read-ahead replaces it and counts it wasted", () => {
    const { reader, asked } = fixture();
    reader.readAhead(0, 1);
    reader.readItemBytes(0, 2);
    expect(text(reader.readItemBytes(0, 1)!)).toBe("one");
    expect(reader.hits).toBe(1);
    reader.readAhead(0, 2);
    reader.readAhead(0, 1);
    expect(reader.wasted).toBe(1);
    expect(asked).toEqual(["0:1", "0:2", "0:2", "0:1"]);
  });
});
