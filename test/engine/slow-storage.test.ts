// Goal: a busy disk never turns acks into errors. Commits here are slow but
// succeed: a store wrapper holds each one for several event-loop turns (so
// requests pile up behind it and group commit carries them together) and
// moves the committer's stopwatch 30 s per commit, far past the slow-commit
// threshold and three times the breaker's window. Many rounds of enqueue,
// dequeue and ack, with requests in flight at once, must all succeed; the
// breaker never leaves closed and nothing is refused; the slow commits are
// reported (the server logs them) instead. No timing assertions: slowness is
// injected, not measured.

import { describe, expect, test } from "bun:test";
import { Engine } from "../../src/engine/engine.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { defaultLimits } from "../../src/limits.ts";
import type { BreakerTransition } from "../../src/storage/circuit-breaker.ts";
import { GroupCommitter } from "../../src/storage/group-commit.ts";
import { MemoryStore } from "../../src/storage/memory/memory-store.ts";
import { type SlowCommitReport, slowCommitMs } from "../../src/storage/slow-commits.ts";
import type { CommitBatch, CommitResult } from "../../src/storage/store.ts";
import { ackDone, dequeued, item, startMs, take, unwrap } from "./support/harness.ts";

/** How long each commit "takes" on the committer's stopwatch (30 s): 30x the slow-commit threshold. */
const commitDelayMs = 30 * slowCommitMs;
/** Event-loop turns each commit is held for: requests arriving meanwhile queue behind it. */
const heldTurns = 5;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A MemoryStore whose commits are slow (held, and timed as 30 s) but always succeed. */
class SlowStore extends MemoryStore {
  commitsSeen = 0;
  constructor(
    shards: number,
    private readonly stopwatch: ManualClock,
  ) {
    super({ shards });
  }

  override async commit(batch: CommitBatch): Promise<CommitResult> {
    this.commitsSeen++;
    for (let i = 0; i < heldTurns; i++) await turn();
    this.stopwatch.advance(commitDelayMs);
    return super.commit(batch);
  }
}

describe("slow storage", () => {
  test("a commit that is slow but succeeds never makes an ack (or any request) fail", async () => {
    const clock = new ManualClock(startMs);
    const stopwatch = new ManualClock(0);
    const store = new SlowStore(4, stopwatch);
    const transitions: BreakerTransition[] = [];
    const slowReports: SlowCommitReport[] = [];
    const writer = new GroupCommitter(store, {
      clock,
      stopwatch,
      events: { breakerTransition: (t) => transitions.push(t), slowCommits: (r) => slowReports.push(r) },
    });
    const engine = Engine.recover({ store, writer, limits: defaultLimits, namespaces: {}, nowMs: clock.nowMs() });

    const rounds = 20;
    const perRound = 8;
    let acked = 0;
    for (let round = 0; round < rounds; round++) {
      // Several enqueues in flight at once: they share slow commits.
      const enqueues = Array.from({ length: perRound }, () => unwrap(engine.enqueue("n", [item("t"), item("t")], clock.nowMs())));
      await Promise.all(enqueues.map((reply) => reply.durable));
      const outcome = dequeued(engine.dequeue("n", take([["t", 2 * perRound]]), clock.nowMs()));
      if (outcome.kind !== "done") throw new Error("expected done");
      const deliveries = outcome.deliveries;
      expect(deliveries.length).toBe(2 * perRound);
      // One ack per delivery, all in flight together behind the slow commit.
      const acks = deliveries.map((d) => ackDone(engine.ack("n", [d.receipt], clock.nowMs())));
      const results = await Promise.allSettled(acks.map((reply) => reply.durable));
      expect(results.filter((r) => r.status === "rejected")).toEqual([]);
      for (const reply of acks) expect([reply.acked, reply.stale]).toEqual([1, []]);
      acked += acks.length;
      expect(writer.allWritable(clock.nowMs())).toBe(true);
      clock.advance(100);
    }
    await writer.drain();

    expect(acked).toBe(rounds * 2 * perRound);
    expect(transitions).toEqual([]);
    expect(writer.breakerState(clock.nowMs())).toBe("closed");
    const stats = writer.commitStats();
    expect(stats.commitFailuresTotal).toBe(0);
    expect(stats.writeSetsRejectedTotal).toBe(0);
    // Every commit was slow, and group commit carried several requests in some of them.
    expect(stats.commitMs.every((ms) => ms === commitDelayMs)).toBe(true);
    expect(Math.max(...stats.writeSetsPerCommit)).toBeGreaterThan(1);
    // The slowness was reported, for the log, rather than acted on.
    expect(slowReports.length).toBeGreaterThan(0);
    expect(slowReports[0]).toMatchObject({ durationMsMax: commitDelayMs, thresholdMs: slowCommitMs });
    expect(engine.stats(null, clock.nowMs()).engine).toMatchObject({ backgroundWriteFailures: 0 });
    engine.checkInvariants();
  });
});
