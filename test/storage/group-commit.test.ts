// Goal: the GroupCommitter batches write sets ended in one turn into one
// commit, gathers the next batch while one is in flight, coalesces writes,
// reserves keys in blocks that survive restarts, and drives the store's one
// circuit breaker (open on failed commits only, never on slow ones; UNAVAILABLE
// with a retry hint, half-open probe, close, reopen; every transition reported
// with its reason). Time comes from a ManualClock; the faulty MemoryStore
// supplies failures and held commits.

import { describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { type BreakerTransition, defaultBreakerOptions } from "../../src/storage/circuit-breaker.ts";
import { pendingWriteSetsMax } from "../../src/limits.ts";
import { GroupCommitter } from "../../src/storage/group-commit.ts";
import { MemoryStore } from "../../src/storage/memory/memory-store.ts";
import { type SlowCommitReport, slowCommitMs, slowCommitReportIntervalMs } from "../../src/storage/slow-commits.ts";
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
    expect(store.commitHistory).toEqual([{ shards: [1], items: 1, itemValues: 0, outcomes: 2, acked: 0, meta: false }]);
  });

  test("pause and policy writes coalesce by (ns, topic, group), last wins; a pause-only set commits and fails with the outcome part", async () => {
    const { store, writer } = setup();
    const a = writer.begin();
    a.putPause({ ns: "n", topic: "t", group: null, untilMs: null });
    a.putPause({ ns: "n", topic: "u", group: null, untilMs: 5 });
    a.putPause({ ns: "n", topic: "u", group: "g", untilMs: 6 });
    a.putPolicy({ ns: "n", topic: "t", group: "g", weight: 2, maxLeased: null, rate: null });
    const b = writer.begin();
    b.deletePause("n", "t", null);
    b.putPause({ ns: "n", topic: "u", group: null, untilMs: 9 });
    b.putPolicy({ ns: "n", topic: "t", group: "g", weight: 3, maxLeased: null, rate: null });
    b.putPolicy({ ns: "n", topic: "t", group: null, weight: null, maxLeased: 4, rate: null });
    b.deletePolicy("n", "t", null);
    await Promise.all([a.end(), b.end()]);
    const byGroup = <T extends { group: string | null }>(list: T[]) => list.sort((x, y) => String(x.group).localeCompare(String(y.group)));
    expect(byGroup([...store.loadPauses()])).toEqual([
      { ns: "n", topic: "u", group: "g", untilMs: 6 },
      { ns: "n", topic: "u", group: null, untilMs: 9 },
    ]);
    expect([...store.loadPolicies()]).toEqual([{ ns: "n", topic: "t", group: "g", weight: 3, maxLeased: null, rate: null }]);
    expect(store.commitHistory).toEqual([{ shards: [], items: 0, itemValues: 0, outcomes: 0, acked: 0, meta: false, pauses: 3, policies: 2 }]);
    // The next batch starts without the last one's pauses.
    await writeOne(writer, 0, 1);
    expect(store.commitHistory[1]).toEqual({ shards: [0], items: 1, itemValues: 0, outcomes: 0, acked: 0, meta: false });
    await store.close();
    const failed = writer.begin();
    failed.deletePause("n", "u", null);
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
    expect(first.shards.map((shard) => [shard.shard, shard.keys])).toEqual([
      [0, [9]],
      [2, [7, 3]],
    ]);
    expect((first.shards[1]?.records[0] as { priority: number }).priority).toBe(2);
    expect(first.outcomes.map((write) => [write.id, write.record?.outcome])).toEqual([
      ["2:1", "expired"],
      ["2:2", "acked"],
    ]);
    const second = batches[1] as CommitBatch;
    expect(second.shards.map((shard) => [shard.shard, shard.keys])).toEqual([[2, [7]]]);
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

describe("GroupCommitter circuit breaker (one per store, opened by failures only)", () => {
  const { failuresToOpen, coolDownMs, probeRetryAfterMs, failureRetryAfterMs, windowMs } = defaultBreakerOptions;

  function setupWithLog(shards = 4) {
    const clock = new ManualClock();
    const store = new MemoryStore({ shards });
    const transitions: BreakerTransition[] = [];
    const slow: SlowCommitReport[] = [];
    const writer = new GroupCommitter(store, {
      clock,
      events: { breakerTransition: (t) => transitions.push(t), slowCommits: (r) => slow.push(r) },
    });
    return { clock, store, writer, transitions, slow };
  }

  async function failUntilOpen(clock: ManualClock, writer: GroupCommitter, shard: number): Promise<void> {
    for (let attempt = 1; attempt <= failuresToOpen; attempt++) {
      clock.advance(100);
      const error = await rejection(writeOne(writer, shard, attempt));
      expect(error.shard).toBe(shard);
      if (attempt < failuresToOpen) {
        // Below the threshold (limit-1 included) the breaker stays closed.
        expect(error.retryAfterMs).toBe(failureRetryAfterMs);
        expect(writer.allWritable(clock.nowMs())).toBe(true);
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

  test("opens after repeated failures, for every shard at once (one transaction covers them all), and logs why", async () => {
    const { clock, store, writer, transitions } = setupWithLog();
    store.failShard(2, new Error("ENOSPC"));
    await failUntilOpen(clock, writer, 2);
    expect(transitions).toEqual([{ from: "closed", to: "open", reason: expect.stringContaining("ENOSPC"), retryAfterMs: coolDownMs }]);
    expect(transitions[0]?.reason).toContain(`${failuresToOpen} commits failed within ${windowMs} ms`);
    for (const shard of [0, 1, 2, 3]) {
      expect(writer.writable(shard, clock.nowMs())).toEqual({ available: false, retryAfterMs: coolDownMs, reason: expect.stringContaining("circuit breaker open") });
    }
    expect(writer.allWritable(clock.nowMs())).toBe(false);
    const commitsBefore = store.commitHistory.length;
    const refused = await rejection(writeOne(writer, 3, 100));
    expect(refused.retryAfterMs).toBe(coolDownMs);
    // Refused before any commit: nothing reached the store.
    expect(store.commitHistory.length).toBe(commitsBefore);
    expect(writer.breakerState(clock.nowMs())).toBe("open");
  });

  test("after the cool-down one probe goes through; success closes the breaker; each step is logged", async () => {
    const { clock, store, writer, transitions } = setupWithLog();
    store.failShard(2);
    await failUntilOpen(clock, writer, 2);
    clock.advance(coolDownMs - 1);
    expect(writer.writable(0, clock.nowMs())).toMatchObject({ available: false, retryAfterMs: 1 });
    clock.advance(1);
    expect(writer.writable(0, clock.nowMs())).toEqual({ available: true });
    expect(writer.allWritable(clock.nowMs())).toBe(false); // half-open admits one probe, not everything
    store.healShard(2);
    const probe = writeOne(writer, 2, 200);
    // While the probe is in flight, others are refused with a short hint.
    expect(writer.writable(1, clock.nowMs())).toMatchObject({ available: false, retryAfterMs: probeRetryAfterMs });
    const second = await rejection(writeOne(writer, 1, 201));
    expect(second.retryAfterMs).toBe(probeRetryAfterMs);
    await probe;
    expect(writer.breakerState(clock.nowMs())).toBe("closed");
    expect(writer.allWritable(clock.nowMs())).toBe(true);
    await writeOne(writer, 2, 202);
    expect(transitions.map((t) => `${t.from}->${t.to}`)).toEqual(["closed->open", "open->half_open", "half_open->probing", "probing->closed"]);
    for (const t of transitions) expect(t.reason.length).toBeGreaterThan(0);
  });

  test("a failed probe reopens the breaker for another cool-down", async () => {
    const { clock, store, writer, transitions } = setupWithLog();
    store.failShard(0, new Error("EIO"));
    await failUntilOpen(clock, writer, 0);
    clock.advance(coolDownMs);
    const probe = await rejection(writeOne(writer, 0, 300));
    expect(probe.retryAfterMs).toBe(coolDownMs);
    expect(writer.writable(0, clock.nowMs())).toMatchObject({ available: false, retryAfterMs: coolDownMs });
    expect(transitions.at(-1)).toEqual({ from: "probing", to: "open", reason: expect.stringContaining("the probe commit failed"), retryAfterMs: coolDownMs });
  });

  test("failures spread wider than the window never open it", async () => {
    const { clock, store, writer } = setup();
    store.failShard(1);
    for (let attempt = 0; attempt < failuresToOpen * 2; attempt++) {
      clock.advance(windowMs / (failuresToOpen - 1));
      await rejection(writeOne(writer, 1, attempt));
    }
    expect(writer.writable(1, clock.nowMs())).toEqual({ available: true });
  });

  test("slow commits that succeed never open it; they are reported at most once per interval", async () => {
    const { clock, store, writer, transitions, slow } = setupWithLog();
    // Far more slow commits than failures open it, each far slower than the slow-commit threshold.
    for (let commit = 1; commit <= failuresToOpen * 4; commit++) {
      store.pauseCommits();
      const end = writeOne(writer, commit % 4, commit);
      await turn();
      clock.advance(slowCommitMs * 30);
      store.resumeCommits();
      await end;
      expect(writer.breakerState(clock.nowMs())).toBe("closed");
    }
    expect(transitions).toEqual([]);
    expect(writer.commitStats().commitMs.every((durationMs) => durationMs === slowCommitMs * 30)).toBe(true);
    // 30 s per commit against a 10 s report interval: every slow commit is its own report here.
    expect(slow.length).toBe(failuresToOpen * 4);
    expect(slow[0]).toEqual({ slowCommits: 1, durationMsMax: slowCommitMs * 30, thresholdMs: slowCommitMs });
  });

  test("slow-commit reports within one interval are summed into the next", async () => {
    const { clock, store, writer, slow } = setupWithLog();
    const slowBy = [slowCommitMs + 1, slowCommitMs + 5, slowCommitMs + 2];
    for (const durationMs of slowBy) {
      store.pauseCommits();
      const end = writeOne(writer, 0, durationMs);
      await turn();
      clock.advance(durationMs);
      store.resumeCommits();
      await end;
    }
    // The first is reported at once; the next two fall within its interval and wait.
    expect(slow).toEqual([{ slowCommits: 1, durationMsMax: slowCommitMs + 1, thresholdMs: slowCommitMs }]);
    clock.advance(slowCommitReportIntervalMs);
    store.pauseCommits();
    const end = writeOne(writer, 0, 99);
    await turn();
    clock.advance(slowCommitMs * 2);
    store.resumeCommits();
    await end;
    expect(slow[1]).toEqual({ slowCommits: 3, durationMsMax: slowCommitMs * 2, thresholdMs: slowCommitMs });
  });

  test("a full write queue refuses at the limit (not at limit-1), without touching the breaker, and is reported", async () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ shards: 1 });
    const full: Array<{ refused: number; pendingWriteSetsMax: number }> = [];
    const writer = new GroupCommitter(store, { clock, events: { queueFull: (r) => full.push(r) } });
    store.pauseCommits();
    const first = writeOne(writer, 0, 0);
    await turn(); // the first is in flight; the rest wait
    const waiting: Array<Promise<void>> = [];
    for (let key = 1; key <= pendingWriteSetsMax; key++) waiting.push(writeOne(writer, 0, key));
    // pendingWriteSetsMax are waiting now (limit-1 was still admitted); the next two are refused.
    const refused = await rejection(writeOne(writer, 0, pendingWriteSetsMax + 1));
    expect(refused).toMatchObject({ shard: null, message: "too many writes waiting for storage" });
    await rejection(writeOne(writer, 0, pendingWriteSetsMax + 2));
    expect(full).toEqual([{ refused: 1, pendingWriteSetsMax }]);
    expect(writer.breakerState(clock.nowMs())).toBe("closed");
    store.resumeCommits();
    await Promise.all([first, ...waiting]);
    expect(writer.commitStats().writeSetsRejectedTotal).toBe(2);
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
