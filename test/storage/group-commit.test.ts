// Goal: the GroupCommitter batches write sets ended in one turn into one
// commit, gathers the next batch while one is in flight, coalesces writes,
// reserves keys in blocks that survive restarts, and drives each shard's
// circuit breaker (open on failures or slow commits, UNAVAILABLE with a retry
// hint, half-open probe, close, reopen). Time comes from a ManualClock; the
// faulty MemoryStore supplies failures and held commits.

import { describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { defaultBreakerOptions } from "../../src/storage/circuit-breaker.ts";
import { GroupCommitter } from "../../src/storage/group-commit.ts";
import { MemoryStore } from "../../src/storage/memory/memory-store.ts";
import type { CommitBatch } from "../../src/storage/store.ts";
import { StorageUnavailableError } from "../../src/storage/writer.ts";
import { itemRecord, outcomeRecord } from "./record-fixtures.ts";
import { loadAll } from "./store-suite.ts";

/** Let setImmediate callbacks and settled promises run. */
function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function setup(shards = 4, keyBlockSize?: number) {
  const clock = new ManualClock();
  const store = new MemoryStore({ shards });
  const writer = new GroupCommitter(store, keyBlockSize === undefined ? { clock } : { clock, keyBlockSize });
  return { clock, store, writer };
}

function writeOne(writer: GroupCommitter, shard: number, key: number, priority = 0): Promise<void> {
  const set = writer.begin();
  set.putItem(shard, key, itemRecord({ priority }));
  return set.end();
}

async function rejection(promise: Promise<void>): Promise<StorageUnavailableError> {
  const error = await promise.then(
    () => null,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(StorageUnavailableError);
  return error as StorageUnavailableError;
}

describe("GroupCommitter batching", () => {
  test("write sets ended in one turn share one commit", async () => {
    const { store, writer } = setup();
    const ends = Array.from({ length: 200 }, (_, index) => writeOne(writer, index % 4, index));
    await Promise.all(ends);
    expect(store.commitHistory.length).toBe(1);
    expect(store.commitHistory[0]?.items).toBe(200);
    const stats = writer.commitStats();
    expect(stats.commitsTotal).toBe(1);
    expect(stats.writeSetsPerCommit).toEqual([200]);
    expect(stats.recordsPerCommit).toEqual([200]);
  });

  test("while a commit is in flight the next batch gathers and starts when it finishes, in order", async () => {
    const { store, writer } = setup();
    store.pauseCommits();
    const order: string[] = [];
    const first = writeOne(writer, 0, 1).then(() => order.push("first"));
    await turn();
    expect(store.commitHistory.length).toBe(1);
    const second = writeOne(writer, 0, 2, 1).then(() => order.push("second"));
    const third = writeOne(writer, 0, 2, 2).then(() => order.push("third"));
    await turn();
    // One commit in flight at a time: the others wait.
    expect(store.commitHistory.length).toBe(1);
    store.resumeCommits();
    await Promise.all([first, second, third]);
    expect(order).toEqual(["first", "second", "third"]);
    expect(store.commitHistory.map((commit) => commit.items)).toEqual([1, 1]);
    // Two writes to (0, 2) in one batch coalesced to the last.
    expect(loadAll(store).get(0)?.map((entry) => [entry.key, entry.record.priority])).toEqual([
      [1, 0],
      [2, 2],
    ]);
  });

  test("a put then delete of one key in one batch leaves it deleted; outcomes coalesce the same way", async () => {
    const { store, writer } = setup();
    const a = writer.begin();
    a.putItem(1, 5, itemRecord());
    a.putOutcome("1:4", outcomeRecord());
    const b = writer.begin();
    b.deleteItem(1, 5);
    b.deleteOutcome("1:4");
    b.putOutcome("1:3", outcomeRecord({ outcome: "expired" }));
    await Promise.all([a.end(), b.end()]);
    expect(loadAll(store).get(1)).toEqual([]);
    expect([...store.loadOutcomes()].map((entry) => entry.id)).toEqual(["1:3"]);
    expect(store.commitHistory).toEqual([{ shards: [1], items: 1, itemValues: 0, outcomes: 2, meta: false }]);
  });

  test("pause writes coalesce by (ns, topic), last wins; a pause-only set commits and fails with the outcome part", async () => {
    const { store, writer } = setup();
    const a = writer.begin();
    a.putPause({ ns: "n", topic: "t", untilMs: null });
    a.putPause({ ns: "n", topic: "u", untilMs: 5 });
    const b = writer.begin();
    b.deletePause("n", "t");
    b.putPause({ ns: "n", topic: "u", untilMs: 9 });
    await Promise.all([a.end(), b.end()]);
    expect([...store.loadPauses()]).toEqual([{ ns: "n", topic: "u", untilMs: 9 }]);
    expect(store.commitHistory).toEqual([{ shards: [], items: 0, itemValues: 0, outcomes: 0, meta: false, pauses: 2 }]);
    // The next batch starts without the last one's pauses.
    await writeOne(writer, 0, 1);
    expect(store.commitHistory[1]).toEqual({ shards: [0], items: 1, itemValues: 0, outcomes: 0, meta: false });
    await store.close();
    const failed = writer.begin();
    failed.deletePause("n", "u");
    expect(await rejection(failed.end())).toBeInstanceOf(StorageUnavailableError);
  });

  test("a coalesced write keeps the first one's place; the next batch starts clean", async () => {
    const { store, writer } = setup();
    const batches: CommitBatch[] = [];
    const commit = store.commit.bind(store);
    store.commit = (batch) => {
      batches.push(batch);
      return commit(batch);
    };
    const a = writer.begin();
    a.putItem(2, 7, itemRecord({ priority: 1 }));
    a.putItem(0, 9, itemRecord({ priority: 1 }));
    a.putItem(2, 3, itemRecord({ priority: 1 }));
    a.putOutcome("2:1", outcomeRecord());
    a.putOutcome("2:2", outcomeRecord());
    const b = writer.begin();
    b.putItem(2, 7, itemRecord({ priority: 2 }));
    b.putOutcome("2:1", outcomeRecord({ outcome: "expired" }));
    await Promise.all([a.end(), b.end()]);
    await writeOne(writer, 2, 7, 3);
    expect(batches.length).toBe(2);
    const first = batches[0] as CommitBatch;
    expect(first.shards.map((shard) => [shard.shard, shard.items.map((write) => write.key)])).toEqual([
      [0, [9]],
      [2, [7, 3]],
    ]);
    expect((first.shards[1]?.items[0]?.record as { priority: number }).priority).toBe(2);
    expect(first.outcomes.map((write) => [write.id, write.record?.outcome])).toEqual([
      ["2:1", "expired"],
      ["2:2", "acked"],
    ]);
    const second = batches[1] as CommitBatch;
    expect(second.shards.map((shard) => [shard.shard, shard.items.map((write) => write.key)])).toEqual([[2, [7]]]);
    expect(second.outcomes).toEqual([]);
    expect(loadAll(store).get(2)?.map((entry) => [entry.key, entry.record.priority])).toEqual([
      [3, 1],
      [7, 3],
    ]);
  });

  test("an empty write set resolves at once without a commit; drain waits for everything", async () => {
    const { store, writer } = setup();
    await writer.begin().end();
    expect(store.commitHistory.length).toBe(0);
    await writer.drain();
    store.pauseCommits();
    const ends = [writeOne(writer, 0, 1), writeOne(writer, 1, 2)];
    let drained = false;
    const draining = writer.drain().then(() => {
      drained = true;
    });
    await turn();
    expect(drained).toBe(false);
    store.resumeCommits();
    await draining;
    await Promise.all(ends);
    expect(drained).toBe(true);
  });

  test("a WriteSet cannot be written after end()", () => {
    const { writer } = setup();
    const set = writer.begin();
    set.putItem(0, 1, itemRecord());
    void set.end();
    expect(() => set.putItem(0, 2, itemRecord())).toThrow("write to an ended WriteSet");
    expect(() => set.end()).toThrow("WriteSet ended twice");
  });
});

describe("GroupCommitter item keys", () => {
  test("keys are monotonic; a block is reserved in the commit of its first use, at limit-1, limit and limit+1", async () => {
    const { store, writer } = setup(2, 3);
    const keys: number[] = [];
    for (let index = 0; index < 4; index++) {
      const key = writer.nextKey();
      keys.push(key);
      await writeOne(writer, key % 2, key);
    }
    expect(keys).toEqual([0, 1, 2, 3]);
    // Key 0 reserved [0,3); keys 1 and 2 (limit-1) use it; key 3 (limit) reserves [3,6).
    expect(store.commitHistory.map((commit) => commit.meta)).toEqual([true, false, false, true]);
    expect(store.meta.keysReservedBelow).toBe(6);
  });

  test("after a restart keys continue from keysReservedBelow, never reusing one", async () => {
    const { store, writer } = setup(2, 10);
    const before = [writer.nextKey(), writer.nextKey()];
    await writeOne(writer, 0, before[1] as number);
    const restarted = new GroupCommitter(store.durableCopy(), { clock: new ManualClock(), keyBlockSize: 10 });
    const after = restarted.nextKey();
    expect(after).toBe(10);
    expect(after).toBeGreaterThan(Math.max(...before));
  });

  test("a reservation rides along until a commit carrying it succeeds", async () => {
    const { store, writer } = setup(2, 5);
    store.pauseCommits();
    const key = writer.nextKey();
    const first = writeOne(writer, 0, key);
    await turn();
    const second = writeOne(writer, 1, writer.nextKey());
    store.resumeCommits();
    await Promise.all([first, second]);
    // The first commit carried the reservation; once it succeeded the second did not.
    expect(store.commitHistory.map((commit) => commit.meta)).toEqual([true, false]);
  });
});

describe("GroupCommitter circuit breaker", () => {
  const { failuresToOpen, coolDownMs, probeRetryAfterMs, failureRetryAfterMs, slowCommitMs } = defaultBreakerOptions;

  async function failUntilOpen(clock: ManualClock, writer: GroupCommitter, shard: number): Promise<void> {
    for (let attempt = 1; attempt <= failuresToOpen; attempt++) {
      clock.advance(100);
      const error = await rejection(writeOne(writer, shard, attempt));
      expect(error.shard).toBe(shard);
      if (attempt < failuresToOpen) {
        // Below the threshold (limit-1 included) the breaker stays closed.
        expect(error.retryAfterMs).toBe(failureRetryAfterMs);
        expect(writer.shardHealth(shard, clock.nowMs())).toEqual({ available: true });
      }
    }
  }

  test("failed commits reject only the write sets touching the failed shard", async () => {
    const { store, writer } = setup();
    store.failShard(1, new Error("EIO"));
    const healthy = writeOne(writer, 0, 1);
    const both = writer.begin();
    both.putItem(0, 2, itemRecord());
    both.putItem(1, 3, itemRecord());
    const failed = both.end();
    await healthy;
    const error = await rejection(failed);
    expect(error.shard).toBe(1);
    expect(error.message).toContain("EIO");
    expect(writer.commitStats().commitFailuresTotal).toBe(1);
  });

  test("opens after repeated failures; refuses the shard with retryAfterMs while other shards work", async () => {
    const { clock, store, writer } = setup();
    store.failShard(2);
    await failUntilOpen(clock, writer, 2);
    expect(writer.shardHealth(2, clock.nowMs())).toEqual({ available: false, retryAfterMs: coolDownMs });
    const commitsBefore = store.commitHistory.length;
    const refused = await rejection(writeOne(writer, 2, 100));
    expect(refused.retryAfterMs).toBe(coolDownMs);
    // Refused before any commit: nothing reached the store.
    expect(store.commitHistory.length).toBe(commitsBefore);
    // New items can go to another shard: its health says so and it commits.
    expect(writer.shardHealth(3, clock.nowMs())).toEqual({ available: true });
    await writeOne(writer, 3, 101);
    expect(writer.breakerStates(clock.nowMs())).toEqual(["closed", "closed", "open", "closed"]);
  });

  test("after the cool-down one probe goes through; success closes the breaker", async () => {
    const { clock, store, writer } = setup();
    store.failShard(2);
    await failUntilOpen(clock, writer, 2);
    clock.advance(coolDownMs - 1);
    expect(writer.shardHealth(2, clock.nowMs())).toEqual({ available: false, retryAfterMs: 1 });
    clock.advance(1);
    expect(writer.shardHealth(2, clock.nowMs())).toEqual({ available: true });
    store.healShard(2);
    const probe = writeOne(writer, 2, 200);
    // While the probe is in flight, others are refused with a short hint.
    expect(writer.shardHealth(2, clock.nowMs())).toEqual({ available: false, retryAfterMs: probeRetryAfterMs });
    const second = await rejection(writeOne(writer, 2, 201));
    expect(second.retryAfterMs).toBe(probeRetryAfterMs);
    await probe;
    expect(writer.breakerStates(clock.nowMs())[2]).toBe("closed");
    await writeOne(writer, 2, 202);
  });

  test("a failed probe reopens the breaker for another cool-down", async () => {
    const { clock, store, writer } = setup();
    store.failShard(0);
    await failUntilOpen(clock, writer, 0);
    clock.advance(coolDownMs);
    const probe = await rejection(writeOne(writer, 0, 300));
    expect(probe.retryAfterMs).toBe(coolDownMs);
    expect(writer.shardHealth(0, clock.nowMs())).toEqual({ available: false, retryAfterMs: coolDownMs });
  });

  test("failures spread wider than the window never open it", async () => {
    const { clock, store, writer } = setup();
    store.failShard(1);
    for (let attempt = 0; attempt < failuresToOpen * 2; attempt++) {
      clock.advance(defaultBreakerOptions.windowMs / (failuresToOpen - 1));
      await rejection(writeOne(writer, 1, attempt));
    }
    expect(writer.shardHealth(1, clock.nowMs())).toEqual({ available: true });
  });

  test("slow commits (median above the threshold) open it", async () => {
    const { clock, store, writer } = setup();
    const minSamples = defaultBreakerOptions.slowSamplesMin;
    for (let commit = 1; commit <= minSamples; commit++) {
      store.pauseCommits();
      const end = writeOne(writer, 3, commit);
      await turn();
      clock.advance(slowCommitMs + 1);
      store.resumeCommits();
      await end;
      const expected = commit < minSamples ? "closed" : "open";
      expect(writer.breakerStates(clock.nowMs())[3]).toBe(expected);
    }
    const stats = writer.commitStats();
    expect(stats.commitMs.every((durationMs) => durationMs === slowCommitMs + 1)).toBe(true);
  });

  test("breaker thresholds can be set per committer", async () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ shards: 1 });
    const writer = new GroupCommitter(store, { clock, breaker: { failuresToOpen: 1, coolDownMs: 50 } });
    store.failShard(0);
    const error = await rejection(writeOne(writer, 0, 1));
    expect(error.retryAfterMs).toBe(50);
  });
});
