// Goal: write sets record their writes in flat logs that the GroupCommitter
// reuses from set to set, and reuse never leaks: a set with no writes takes
// no log; a set's log goes back to the pool once its batch is built, or at
// once when the set is refused, and the next set that takes it starts empty,
// whether the earlier commit succeeded, failed, or never happened. The pool
// keeps at most writeLogs.pooledWritesMax write slots (limit and limit+1). Time comes
// from a ManualClock; the faulty MemoryStore supplies failures and held commits.

import { describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { writeLogs } from "../../src/limits.ts";
import { GroupCommitter } from "../../src/storage/group-commit.ts";
import { MemoryStore } from "../../src/storage/memory/memory-store.ts";
import type { PendingWriteSet } from "../../src/storage/pending-write-set.ts";
import type { CommitBatch } from "../../src/storage/store.ts";
import { WriteKind, WriteLog, WriteLogPool } from "../../src/storage/write-log.ts";
import { StorageUnavailableError } from "../../src/storage/writer.ts";
import { itemRecord, outcomeRecord } from "./record-fixtures.ts";
import { loadAll } from "./store-suite.ts";

function setup(shards = 2) {
  const clock = new ManualClock();
  const store = new MemoryStore({ shards });
  const writer = new GroupCommitter(store, { clock, breaker: { failuresToOpen: 1 } });
  const batches: CommitBatch[] = [];
  const commit = store.commit.bind(store);
  store.commit = (batch) => {
    batches.push(batch);
    return commit(batch);
  };
  return { clock, store, writer, batches };
}

/** The set begin() made, as the GroupCommitter sees it. */
function begin(writer: GroupCommitter): PendingWriteSet {
  return writer.begin() as PendingWriteSet;
}

/** Each shard's keys in a batch. */
function keysOf(batch: CommitBatch | undefined): Array<[number, number[]]> {
  return (batch?.shards ?? []).map((shardBatch) => [shardBatch.shard, shardBatch.keys]);
}

async function failure(promise: Promise<void>): Promise<unknown> {
  return await promise.then(
    () => null,
    (reason: unknown) => reason,
  );
}

describe("WriteLog", () => {
  test("records each write's kind and fields in the order made", () => {
    const log = new WriteLog();
    const record = itemRecord();
    log.item(1, 7, record);
    log.acked("n", 0, 8, 1_000);
    log.outcome("0:9", null);
    log.purgeAcked(500);
    const pause = { ns: "n", topic: "t", group: "g", record: null };
    log.pause(pause);
    const policy = { ns: "n", topic: "t", group: null, record: null };
    log.policy(policy);
    expect(log.count).toBe(6);
    expect(log.kinds).toEqual([WriteKind.item, WriteKind.acked, WriteKind.outcome, WriteKind.purgeAcked, WriteKind.pause, WriteKind.policy]);
    expect(log.shards.slice(0, 2)).toEqual([1, 0]);
    expect(log.keys.slice(0, 2)).toEqual([7, 8]);
    expect([log.timesMs[1], log.timesMs[3]]).toEqual([1_000, 500]);
    expect(log.names).toEqual([null, "n", "0:9", null, null, null]);
    expect(log.records[0]).toBe(record);
    expect(log.records[4]).toBe(pause);
    expect(log.records[5]).toBe(policy);
  });
});

describe("WriteLogPool", () => {
  function logOf(writes: number): WriteLog {
    const log = new WriteLog();
    for (let key = 0; key < writes; key++) log.item(0, key, null);
    return log;
  }

  test("gives back the logs it kept, empty; keeps up to writeLogs.pooledWritesMax slots (limit kept, limit+1 dropped)", () => {
    const pool = new WriteLogPool();
    const atLimit = logOf(writeLogs.pooledWritesMax);
    pool.give(atLimit);
    expect(atLimit.count).toBe(0);
    // One slot more than the pool keeps: dropped, though cleared all the same.
    const oneMore = logOf(1);
    pool.give(oneMore);
    expect(oneMore.count).toBe(0);
    expect(pool.take()).toBe(atLimit);
    const fresh = pool.take();
    expect(fresh).not.toBe(oneMore);
    expect(fresh.count).toBe(0);

    const pastLimit = logOf(writeLogs.pooledWritesMax + 1);
    pool.give(pastLimit);
    expect(pool.take()).not.toBe(pastLimit);
  });
});

describe("GroupCommitter write logs", () => {
  test("a set with no writes takes no log; a committed set's log serves the next set, which starts empty", async () => {
    const { writer, batches } = setup();
    const empty = begin(writer);
    expect(empty.log).toBeNull();
    await empty.end();
    expect(batches.length).toBe(0);

    const first = begin(writer);
    first.putItem(0, 1, itemRecord());
    first.putOutcome("0:1", outcomeRecord());
    first.ackItem("n", 1, 2, 10);
    const firstLog = first.log;
    await first.end();
    expect(first.log).toBeNull();

    const second = begin(writer);
    second.putItem(1, 3, itemRecord());
    expect(second.log).toBe(firstLog);
    expect(second.log?.count).toBe(1);
    await second.end();
    expect(keysOf(batches[1])).toEqual([[1, [3]]]);
    expect(batches[1]?.outcomes).toEqual([]);
    expect(batches[1]?.acked).toBeNull();
  });

  test("the log of a set refused at close() goes back at once; its writes reach no commit", async () => {
    const { store, writer, batches } = setup();
    store.failShard(0, new Error("EIO"));
    const failing = begin(writer);
    failing.putItem(0, 1, itemRecord());
    expect(await failure(failing.end())).toBeInstanceOf(StorageUnavailableError);
    // One failed commit opened the breaker: the next set is refused in close().
    const refused = begin(writer);
    refused.putItem(1, 2, itemRecord());
    refused.putItem(1, 3, itemRecord());
    const refusedLog = refused.log;
    const refusal = failure(refused.end());
    expect(refused.log).toBeNull();
    expect(await refusal).toBeInstanceOf(StorageUnavailableError);
    expect(batches.length).toBe(1);

    const later = begin(writer);
    later.putItem(1, 4, itemRecord());
    expect(later.log).toBe(refusedLog);
    expect(later.log?.count).toBe(1);
  });

  test("after a failed commit, the next sets (reusing its logs) commit only their own writes", async () => {
    const { clock, store, writer, batches } = setup();
    store.failShard(1, new Error("ENOSPC"));
    const failed = begin(writer);
    failed.putItem(1, 1, itemRecord({ priority: 1 }));
    failed.putItem(1, 2, itemRecord({ priority: 1 }));
    expect(((await failure(failed.end())) as StorageUnavailableError).shard).toBe(1);
    store.healShard(1);
    clock.advance(60_000);

    const next = begin(writer);
    next.putItem(1, 3, itemRecord({ priority: 2 }));
    await next.end();
    expect(keysOf(batches.at(-1))).toEqual([[1, [3]]]);
    expect(loadAll(store).get(1)?.map((entry) => [entry.key, entry.record.priority])).toEqual([[3, 2]]);
  });
});
