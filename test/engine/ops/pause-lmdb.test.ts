// Goal: a pause survives a restart of the engine over the real LMDB store
// (the memory store's case is in pause.test.ts): an untimed pause, a timed
// one that keeps its end, one whose end passed while the engine was down
// (over at the first tick, its record deleted), and a resume. Time is a
// ManualClock; the store is closed and the data dir opened again.

import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Engine } from "../../../src/engine/engine.ts";
import { ManualClock } from "../../../src/lib/clock.ts";
import { defaultLimits } from "../../../src/limits.ts";
import { GroupCommitter } from "../../../src/storage/group-commit.ts";
import { openLmdbStore } from "../../../src/storage/lmdb/lmdb-store.ts";
import type { Store } from "../../../src/storage/store.ts";
import { dequeued, item, startMs, take, unwrap } from "../support/harness.ts";

const dirs: string[] = [];
const stores: Store[] = [];

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function openEngine(dataDir: string, clock: ManualClock): Promise<{ engine: Engine; writer: GroupCommitter; store: Store }> {
  const store = await openLmdbStore({ dataDir, shards: 2, durability: "strict" });
  stores.push(store);
  const writer = new GroupCommitter(store, { clock });
  const engine = Engine.recover({ store, writer, limits: defaultLimits, namespaces: {}, nowMs: clock.nowMs() });
  return { engine, writer, store };
}

function pausedOf(engine: Engine, topic: string) {
  const entry = engine.topics("n", { prefix: topic, limit: 1, after: null }).topics.find((t) => t.topic === topic);
  return entry === undefined ? undefined : { paused: entry.paused, pausedUntilMs: entry.pausedUntilMs };
}

describe("pause across an LMDB restart", () => {
  test("untimed, timed, ended while down, and resumed pauses come back as they were", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "orq-pause-lmdb-"));
    dirs.push(dataDir);
    const clock = new ManualClock(startMs);
    let { engine, writer, store } = await openEngine(dataDir, clock);
    await unwrap(engine.enqueue("n", [item("a"), item("b"), item("c"), item("d")], clock.nowMs())).durable;
    for (const [topic, forMs] of [["a", null], ["b", 60_000], ["c", 100], ["d", null], ["empty", null]] as const) {
      await unwrap(engine.pause("n", topic, forMs, clock.nowMs())).durable;
    }
    await unwrap(engine.resume("n", "d", clock.nowMs())).durable;
    await writer.drain();
    await store.close();
    stores.splice(stores.indexOf(store), 1);

    clock.advance(500);
    ({ engine, writer, store } = await openEngine(dataDir, clock));
    engine.checkInvariants();
    expect(pausedOf(engine, "a")).toEqual({ paused: true, pausedUntilMs: undefined });
    expect(pausedOf(engine, "b")).toEqual({ paused: true, pausedUntilMs: startMs + 60_000 });
    expect(pausedOf(engine, "empty")).toEqual({ paused: true, pausedUntilMs: undefined });
    expect(pausedOf(engine, "d")).toEqual({ paused: false, pausedUntilMs: undefined });
    // c's end passed while the engine was down: the first tick ends it and deletes its record.
    expect(engine.nextDeadlineMs()).toBe(startMs + 100);
    engine.tick(clock.nowMs());
    expect(pausedOf(engine, "c")).toEqual({ paused: false, pausedUntilMs: undefined });
    const got = dequeued(engine.dequeue("n", take([["a", 1], ["b", 1], ["c", 1], ["d", 1]]), clock.nowMs()));
    expect(got.kind === "done" ? got.deliveries.map((d) => d.topic) : []).toEqual(["c", "d"]);
    await writer.drain();
    expect([...store.loadPauses()].map((p) => p.topic).sort()).toEqual(["a", "b", "empty"]);
    engine.checkInvariants();
  });
});
