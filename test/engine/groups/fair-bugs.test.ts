// Goal: the rate-bucket cases the fair model (fair-model.test.ts) once found
// wrong, each reduced to its few steps and kept as a regression test: each
// states the documented behaviour (docs/SCHEDULING.md).

import { describe, expect, test } from "bun:test";
import type { PolicyInput } from "../../../src/engine/api.ts";
import { Harness, item } from "../support/harness.ts";

function g(group: string | null) {
  return { ...item("t"), group };
}

function policy(group: string | null, fields: Partial<PolicyInput>): PolicyInput {
  return { topic: "t", group, weight: null, maxLeased: null, rate: null, clear: false, ...fields };
}

async function groupsOf(h: Harness, count: number): Promise<Array<string | null>> {
  return (await h.dequeue("n", [["t", count]])).map((d) => d.group ?? null);
}

/** `n` other groups each drain a slow bucket first: their buckets, never full again, are what the sweep looks at. */
async function drainedBuckets(h: Harness, n: number): Promise<void> {
  const names = Array.from({ length: n }, (_, i) => `x${i}`);
  for (const name of names) await h.settle(h.engine.policy("n", policy(name, { rate: { count: 1, perMs: 1_000_000 } }), h.now));
  await h.enqueue("n", names.map((name) => g(name)));
  expect(await groupsOf(h, n)).toHaveLength(n);
}

describe("B5: whether the sweep dropped a full bucket changes what a rate change gives", () => {
  // SCHEDULING.md: "A changed rate keeps the bucket's tokens, capped at the new count" and
  // "A full bucket is dropped, since a new one starts full". The two disagree when a full
  // bucket's count grows: kept, it holds its old count of tokens; dropped (policy-table.ts
  // sweeps two buckets per read, oldest first), the new rate starts full.
  async function burstAfterRaise(others: number): Promise<number> {
    const h = new Harness();
    if (others > 0) await drainedBuckets(h, others);
    await h.settle(h.engine.policy("n", policy("a", { rate: { count: 1, perMs: 100 } }), h.now));
    await h.enqueue("n", [g("a"), g("a"), g("a"), g("a"), g("a"), g("a")]);
    expect(await groupsOf(h, 1)).toEqual(["a"]);
    h.advance(100); // a's bucket is full again (1 token)
    await h.settle(h.engine.policy("n", policy("a", { rate: { count: 5, perMs: 100 } }), h.now));
    return (await groupsOf(h, 10)).length;
  }

  test("B5a: raising a full bucket's count gives the same burst whatever other buckets the topic has", async () => {
    // With 4 other (drained) buckets the sweep does not reach a's: 1 token; alone, it is dropped: 5.
    expect(await burstAfterRaise(4)).toBe(await burstAfterRaise(0));
  });

  // Within per_ms of a restart a bucket made again is "empty at the restart instant" (ce664d5):
  // a full bucket the sweep dropped comes back empty under the new rate, a kept one is resized
  // and keeps its token. Four other groups' buckets (1 per 1,000 s, empty at the restart) stay
  // ahead of a's in the sweep's order and keep it from a's: 1 delivery; alone: 0.
  async function afterRestart(others: number): Promise<number> {
    const h = new Harness();
    if (others > 0) await drainedBuckets(h, others);
    await h.settle(h.engine.policy("n", policy("a", { rate: { count: 1, perMs: 40 } }), h.now));
    await h.enqueue("n", [g("a"), g("a"), g("a")]);
    await h.restart();
    h.advance(40);
    expect(await groupsOf(h, 5)).toEqual(["a"]);
    h.advance(40); // a's bucket (1 per 40 ms) is full again
    await h.settle(h.engine.policy("n", policy("a", { rate: { count: 1, perMs: 1_000_000 } }), h.now));
    return (await groupsOf(h, 5)).length;
  }

  test("B5b: a rate change soon after a restart gives the same tokens whether the full bucket was dropped or kept", async () => {
    expect(await afterRestart(4)).toBe(await afterRestart(0));
  });
});

test("B10: a lowered rate binds at once, also while the group has no items", async () => {
  // A group's rate falls from 1 per 100 ms to 1 per 10 s while the group is forgotten (no items):
  // its bucket (empty) is only resized when the group is made again, so it went on refilling at
  // the old rate in between, and a2 goes 100 ms later instead of ~10 s.
  const h = new Harness();
  await h.settle(h.engine.policy("n", policy("a", { rate: { count: 1, perMs: 100 } }), h.now));
  await h.enqueue("n", [g("a")]);
  const [a1] = await h.dequeue("n", [["t", 1]]);
  await h.settleAck(h.engine.ack("n", [a1!.receipt], h.now));
  await h.settle(h.engine.policy("n", policy("a", { rate: { count: 1, perMs: 10_000 } }), h.now));
  h.advance(100);
  await h.enqueue("n", [g("a")]);
  expect(await groupsOf(h, 1)).toEqual([]);
  h.advance(9_900);
  expect(await groupsOf(h, 1)).toEqual(["a"]);
});

test("B11: a rate first set after a restart starts full", async () => {
  // SCHEDULING.md: a bucket starts full; after a restart the buckets (which were not stored)
  // start empty. A rate that did not exist before the restart has no lost bucket, yet a bucket
  // made within per_ms of the restart for any policy of a topic read back starts empty.
  const h = new Harness();
  await h.settle(h.engine.policy("n", policy(null, { maxLeased: 10 }), h.now));
  await h.restart();
  await h.settle(h.engine.policy("n", policy("a", { rate: { count: 2, perMs: 1000 } }), h.now));
  await h.enqueue("n", [g("a"), g("a")]);
  expect(await groupsOf(h, 2)).toEqual(["a", "a"]);
});

test("B12: a bucket holding exactly one token lets a delivery through (float precision at epoch milliseconds)", async () => {
  // TokenBucket keeps fullAtMs as an absolute epoch ms (about 1.7e12, where a float64 resolves
  // about 0.0002 ms); a level read from it is off by ~1e-6 token, far above the 1e-9 slack. The
  // topic's 3 per 300 ms bucket holds exactly 1 token 100 ms after it was drained; resized to
  // 3 per 700 ms it still holds 1 token, but reads 0.9999996: the dequeue is refused, and the
  // refill deadline is set at the same ms (nextAtMs rounds to now), so it is handled again and
  // again within that ms (up to deadlinesPerTickMax per tick) until the clock moves.
  const h = new Harness();
  await h.settle(h.engine.policy("n", policy(null, { rate: { count: 3, perMs: 300 } }), h.now));
  await h.enqueue("n", [g(null), g(null), g(null), g(null)]);
  expect(await groupsOf(h, 3)).toHaveLength(3);
  h.advance(100);
  await h.settle(h.engine.policy("n", policy(null, { rate: { count: 3, perMs: 700 } }), h.now));
  expect(await groupsOf(h, 1)).toHaveLength(1);
});

describe("B12: a signature freed while its signature heap keeps a stale entry", () => {
  test("a restricted pick after the last item of a group's requires signature ended does not ask about the freed id", async () => {
    const h = new Harness({ shards: 1 });
    await h.enqueue("n", [{ ...item("t", { requires: { gpu: "a" } }), group: "g" }, { ...item("t", { requires: { cpu: "x" } }), group: "h" }]);
    // A restricted worker files every signature's entries (signature-heaps.ts), then drains gpu:a's only item.
    const [first] = await h.dequeue("n", [["t", 1]], { capabilities: { gpu: "a" } });
    await h.settleAck(h.engine.ack("n", [(first as { receipt: string }).receipt], h.now));
    // gpu:a's signature id is free now; its group entry is stale. Another restricted pick walks the signatures.
    expect((await h.dequeue("n", [["t", 1]], { capabilities: { cpu: "x" } })).length).toBe(1);
    h.check();
  });
});
