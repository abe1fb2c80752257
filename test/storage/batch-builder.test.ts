// Goal: BatchBuilder turns write sets' flat logs into one CommitBatch with
// the semantics the engine relies on: item writes per shard in the order
// made, a later write to the same key taking the earlier one's place (the
// last write wins, at the first one's position) within a set and across sets;
// an ack deleting its item in that same place and entering the one acked-log
// record; outcomes and pauses coalesced alike; the largest purge bound; and
// nothing of one batch (or of a log cleared for reuse) in the next.

import { describe, expect, test } from "bun:test";
import { BatchBuilder } from "../../src/storage/batch-builder.ts";
import type { CommitBatch } from "../../src/storage/store.ts";
import { WriteLog } from "../../src/storage/write-log.ts";
import { itemRecord, outcomeRecord } from "./record-fixtures.ts";

/** Each shard's writes as [key, priority or "bytes" or null]. */
function itemsOf(batch: CommitBatch): Array<[number, Array<[number, number | string | null]>]> {
  return batch.shards.map((shardBatch) => [
    shardBatch.shard,
    shardBatch.keys.map((key, index): [number, number | string | null] => {
      const record = shardBatch.records[index];
      if (record === null || record === undefined) return [key, null];
      return [key, record instanceof Uint8Array ? "bytes" : record.priority];
    }),
  ]);
}

function set(log: WriteLog | null): { log: WriteLog | null } {
  return { log };
}

describe("BatchBuilder", () => {
  test("item writes per shard in order; the last write to a key wins at the first one's position, within a set and across sets", () => {
    const a = new WriteLog();
    a.item(1, 10, itemRecord({ priority: 1 }));
    a.item(0, 20, itemRecord({ priority: 1 }));
    a.item(1, 11, itemRecord({ priority: 1 }));
    a.item(1, 10, itemRecord({ priority: 2 }));
    const b = new WriteLog();
    b.item(1, 12, new Uint8Array([1]));
    b.item(1, 11, null);
    b.item(0, 20, itemRecord({ priority: 3 }));
    const batch = new BatchBuilder().build([set(a), set(null), set(b)], null);
    expect(itemsOf(batch)).toEqual([
      [0, [[20, 3]]],
      [
        1,
        [
          [10, 2],
          [11, null],
          [12, "bytes"],
        ],
      ],
    ]);
    expect(batch.outcomes).toEqual([]);
    expect(batch.acked).toBeNull();
    expect(batch.ackedPurgeBeforeMs).toBeNull();
    expect(batch.pauses).toBeUndefined();
  });

  test("an ack deletes its item in the place of an earlier write to it and enters one acked-log record for the batch", () => {
    const enqueue = new WriteLog();
    enqueue.item(0, 5, itemRecord({ priority: 4 }));
    enqueue.item(0, 6, itemRecord({ priority: 4 }));
    const ackA = new WriteLog();
    ackA.acked("billing", 0, 5, 1_000);
    const ackB = new WriteLog();
    ackB.acked("mail", 1, 7, 3_000);
    ackB.acked("billing", 0, 8, 2_000);
    const batch = new BatchBuilder().build([set(enqueue), set(ackA), set(ackB)], null);
    expect(itemsOf(batch)).toEqual([
      [
        0,
        [
          [5, null],
          [6, 4],
          [8, null],
        ],
      ],
      [1, [[7, null]]],
    ]);
    expect(batch.acked).toEqual({ endedAtMs: 3_000, namespaces: ["billing", "mail"], nsIndexes: [0, 1, 0], shards: [0, 1, 0], keys: [5, 7, 8] });
  });

  test("outcomes, pauses and policies: the last write per id or (ns, topic, group) wins at the first one's position; the largest purge bound is kept", () => {
    const a = new WriteLog();
    a.outcome("0:1", outcomeRecord({ outcome: "acked" }));
    a.outcome("0:2", outcomeRecord({ outcome: "expired" }));
    a.pause({ ns: "n", topic: "t", group: null, record: { ns: "n", topic: "t", group: null, untilMs: 50 } });
    a.pause({ ns: "n", topic: "t", group: "g", record: { ns: "n", topic: "t", group: "g", untilMs: 70 } });
    a.policy({ ns: "n", topic: "t", group: null, record: { ns: "n", topic: "t", group: null, weight: null, maxLeased: 1, rate: null } });
    a.policy({ ns: "n", topic: "t", group: "*", record: { ns: "n", topic: "t", group: "*", weight: 2, maxLeased: null, rate: null } });
    a.purgeAcked(700);
    const b = new WriteLog();
    b.outcome("0:1", null);
    b.pause({ ns: "n", topic: "u", group: null, record: { ns: "n", topic: "u", group: null, untilMs: 60 } });
    b.pause({ ns: "n", topic: "t", group: null, record: null });
    b.policy({ ns: "n", topic: "t", group: null, record: null });
    b.purgeAcked(400);
    const batch = new BatchBuilder().build([set(a), set(b)], null);
    expect(batch.outcomes.map((write) => [write.id, write.record?.outcome ?? null])).toEqual([
      ["0:1", null],
      ["0:2", "expired"],
    ]);
    expect(batch.pauses).toEqual([
      { ns: "n", topic: "t", group: null, record: null },
      { ns: "n", topic: "t", group: "g", record: { ns: "n", topic: "t", group: "g", untilMs: 70 } },
      { ns: "n", topic: "u", group: null, record: { ns: "n", topic: "u", group: null, untilMs: 60 } },
    ]);
    expect(batch.policies).toEqual([
      { ns: "n", topic: "t", group: null, record: null },
      { ns: "n", topic: "t", group: "*", record: { ns: "n", topic: "t", group: "*", weight: 2, maxLeased: null, rate: null } },
    ]);
    expect(batch.ackedPurgeBeforeMs).toBe(700);
    expect(batch.shards).toEqual([]);
  });

  test("the next batch starts clean, and a log cleared for reuse brings nothing of its earlier writes", () => {
    const builder = new BatchBuilder();
    const log = new WriteLog();
    log.item(0, 1, itemRecord({ priority: 1 }));
    log.acked("n", 1, 2, 10);
    log.outcome("0:1", outcomeRecord());
    log.pause({ ns: "n", topic: "t", group: null, record: null });
    log.policy({ ns: "n", topic: "t", group: "g", record: null });
    log.purgeAcked(5);
    const first = builder.build([set(log)], null);
    expect(first.shards.map((shardBatch) => shardBatch.shard)).toEqual([0, 1]);

    log.clear();
    expect(log.count).toBe(0);
    // The cleared log's reference columns hold nothing: a pooled log pins no record or payload.
    expect([...log.names, ...log.records].every((value) => value === null)).toBe(true);
    log.item(0, 1, itemRecord({ priority: 2 }));
    const second = builder.build([set(log)], null);
    expect(itemsOf(second)).toEqual([[0, [[1, 2]]]]);
    expect(second.acked).toBeNull();
    expect(second.outcomes).toEqual([]);
    expect(second.pauses).toBeUndefined();
    expect(second.ackedPurgeBeforeMs).toBeNull();
    // The first batch is the store's: building the second changed nothing in it.
    expect(itemsOf(first)).toEqual([
      [0, [[1, 1]]],
      [1, [[2, null]]],
    ]);
  });
});
