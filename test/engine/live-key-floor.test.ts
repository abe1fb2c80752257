// Goal: once recovered, the engine hands its store each shard's lowest live
// key (Store.setLiveKeyFloor), and that floor follows enqueues, acks and
// cancels: the LMDB store deletes acked records below it (ack-sweep.ts), so a
// floor above a live item would lose that item's record.

import { describe, expect, test } from "bun:test";
import { Engine } from "../../src/engine/engine.ts";
import { parseId } from "../../src/engine/state/ids.ts";
import { defaultLimits } from "../../src/limits.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { GroupCommitter } from "../../src/storage/group-commit.ts";
import { MemoryStore } from "../../src/storage/memory/memory-store.ts";
import { ackDone, dequeued, item, startMs, take, unwrap } from "./support/harness.ts";

class FloorStore extends MemoryStore {
  floorOf: ((shard: number) => number) | null = null;
  setLiveKeyFloor(floorOf: (shard: number) => number): void {
    this.floorOf = floorOf;
  }
}

describe("the live-key floor the engine gives its store", () => {
  test("is each shard's lowest live key, Infinity for an empty shard, through enqueues, acks and cancels", async () => {
    const clock = new ManualClock(startMs);
    const store = new FloorStore({ shards: 4 });
    const writer = new GroupCommitter(store, { clock });
    const engine = Engine.recover({ store, writer, limits: defaultLimits, namespaces: {}, nowMs: clock.nowMs() });
    const floorOf = store.floorOf;
    if (floorOf === null) throw new Error("the engine did not set the floor");
    for (let shard = 0; shard < 4; shard++) expect(floorOf(shard)).toBe(Infinity);

    const live = new Map<string, { shard: number; key: number }>();
    const expectFloors = () => {
      for (let shard = 0; shard < 4; shard++) {
        const keys = [...live.values()].filter((at) => at.shard === shard).map((at) => at.key);
        expect(floorOf(shard)).toBe(keys.length === 0 ? Infinity : Math.min(...keys));
      }
    };
    for (let batch = 0; batch < 6; batch++) {
      const { value } = unwrap(engine.enqueue("ns", Array.from({ length: 5 }, (_, i) => item("t", { priority: (batch + i) % 3 })), clock.nowMs()));
      await writer.drain();
      for (const id of value.ids) live.set(id, parseId(id)!);
    }
    expectFloors();
    // Acks in priority order, as a worker takes them: the floor stays under the lower-priority items still live.
    for (let round = 0; round < 4; round++) {
      const outcome = dequeued(engine.dequeue("ns", take([["t", 4]]), clock.nowMs()));
      if (outcome.kind !== "done") throw new Error("expected deliveries");
      const deliveries = outcome.deliveries;
      ackDone(engine.ack("ns", deliveries.map((d) => d.receipt), clock.nowMs()));
      await writer.drain();
      for (const d of deliveries) live.delete(d.id);
      expectFloors();
    }
    const someId = [...live.keys()][0]!;
    unwrap(engine.cancel("ns", [someId], clock.nowMs()));
    await writer.drain();
    live.delete(someId);
    expectFloors();
  });
});
