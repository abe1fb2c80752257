// Goal: a namespace kept in memory beside durable ones (memory-namespaces.ts),
// under the real engine and GroupCommitter: its replies settle while the
// durable store holds every commit, nothing of it reaches the durable store
// (items, outcomes, acked log, pauses, policies), its items are delivered
// with their payloads from memory, and a restart starts it empty while a
// durable namespace keeps its items.

import { describe, expect, test } from "bun:test";
import { Engine } from "../../src/engine/engine.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { defaultLimits } from "../../src/limits.ts";
import { GroupCommitter } from "../../src/storage/group-commit.ts";
import { MemoryItems, MemoryNamespaceStore, MemoryNamespaceWriter } from "../../src/storage/memory/memory-namespaces.ts";
import { MemoryStore } from "../../src/storage/memory/memory-store.ts";
import { item, take } from "../engine/support/harness.ts";
import { loadAll } from "./store-suite.ts";

const startMs = 1_700_000_000_000;

function open(durable: MemoryStore, clock: ManualClock) {
  const writer = new GroupCommitter(durable, { clock });
  const items = new MemoryItems(durable.shardCount, new Set(["scratch"]));
  const engine = Engine.recover({
    store: new MemoryNamespaceStore(durable, items),
    writer: new MemoryNamespaceWriter(writer, items),
    limits: defaultLimits,
    namespaces: { scratch: { enqueuePerMinute: null } },
    nowMs: clock.nowMs(),
  });
  return { engine, writer };
}

/** Whether `promise` has settled after the event loop turned a few times. */
async function settled(promise: Promise<unknown> | null): Promise<boolean> {
  let done = promise === null;
  void promise?.then(() => (done = true), () => (done = true));
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  return done;
}

function unwrap<T>(result: { ok: true; value: T } | { ok: false; failure: { message: string } }): T {
  if (!result.ok) throw new Error(result.failure.message);
  return result.value;
}

describe("in-memory namespaces beside durable ones", () => {
  test("replies wait for no commit, nothing reaches the durable store, and a restart starts the namespace empty", async () => {
    const clock = new ManualClock(startMs);
    const durable = new MemoryStore({ shards: 4 });
    const { engine, writer } = open(durable, clock);
    durable.pauseCommits();

    const scratch = unwrap(engine.enqueue("scratch", [item("t", { payload: new Uint8Array([7, 8]) }), item("t")], clock.nowMs()));
    expect(await settled(scratch.durable)).toBe(true);
    const kept = unwrap(engine.enqueue("kept", [item("t", { payload: new Uint8Array([9]) })], clock.nowMs()));
    expect(await settled(kept.durable)).toBe(false);

    const outcome = engine.dequeue("scratch", take([["t", 1]]), clock.nowMs());
    if (!outcome.ok || outcome.kind !== "done") throw new Error("expected deliveries");
    expect(await settled(outcome.durable)).toBe(true);
    expect(outcome.deliveries.map((d) => [d.id, [...d.payload]])).toEqual([[scratch.value.ids[0]!, [7, 8]]]);
    const ack = engine.ack("scratch", [outcome.deliveries[0]!.receipt], clock.nowMs());
    if (!ack.ok) throw new Error("ack failed");
    expect(ack.acked).toBe(1);
    expect(await settled(ack.durable)).toBe(true);
    const pause = unwrap(engine.pause("scratch", "t", null, clock.nowMs()));
    expect(await settled(pause.durable)).toBe(true);
    const cancel = unwrap(engine.cancel("scratch", [scratch.value.ids[1]!], clock.nowMs()));
    expect(cancel.value.cancelled).toBe(1);
    expect(await settled(cancel.durable)).toBe(true);
    expect(unwrap(engine.get("scratch", [scratch.value.ids[0]!], clock.nowMs())).items[0]).toMatchObject({ state: "ended", outcome: "acked" });

    durable.resumeCommits();
    expect(await settled(kept.durable)).toBe(true);
    await writer.drain();
    const stored = [...loadAll(durable).values()].flat();
    expect(stored.map(({ record }) => record.ns)).toEqual(["kept"]);
    expect([...durable.loadOutcomes()]).toEqual([]);
    expect([...durable.loadAckedLog()]).toEqual([]);
    expect([...durable.loadPauses()]).toEqual([]);
    expect(durable.commitHistory.every((commit) => commit.items <= 1)).toBe(true);

    const restarted = open(durable.durableCopy(), clock);
    expect(unwrap(restarted.engine.get("scratch", scratch.value.ids, clock.nowMs())).items).toEqual([null, null]);
    expect(unwrap(restarted.engine.get("kept", kept.value.ids, clock.nowMs())).items[0]).toMatchObject({ state: "ready" });
    const again = restarted.engine.dequeue("kept", take([["t", 1]]), clock.nowMs());
    if (!again.ok || again.kind !== "done") throw new Error("expected deliveries");
    expect(again.deliveries.map((d) => [...d.payload])).toEqual([[9]]);
  });
});
