// Goal: a failure runs down an `after` chain of any depth. 50,000 items each
// `after` the one before (deeper than a two-function recursion survives on
// Bun's stack: about 40,000 levels) all become dead letters when the first is
// cancelled or made a dead letter, each with the dead_reason naming its own
// dependency, and the engine is consistent and stores them dead (a restart
// reads them back). Nothing here is timed: the engine runs on the harness's
// manual clock and an in-memory store.

import { describe, expect, test } from "bun:test";
import { Harness, item, unwrap } from "./support/harness.ts";

/** Items in the chain after its head. */
const chainLength = 50_000;

/** The head (a plain item on topic "dep") and chainLength items, each `after` the one before. */
async function chain(h: Harness): Promise<string[]> {
  const [head] = await h.enqueue("n", [item("dep")]);
  const ids: string[] = [head as string];
  const durable: Array<Promise<void> | null> = [];
  for (let i = 0; i < chainLength; i++) {
    const reply = unwrap(h.engine.enqueue("n", [item("t", { after: [ids[i] as string] })], h.now));
    ids.push(reply.value.ids[0] as string);
    durable.push(reply.durable);
  }
  await Promise.all(durable);
  return ids;
}

/** Every item after the head is a dead letter naming the item before it; the first names the head's end. */
function expectChainDead(h: Harness, ids: string[], headEnd: "cancelled" | "dead"): void {
  const wrong: string[] = [];
  for (let i = 1; i < ids.length; i++) {
    const id = ids[i] as string;
    const expected = `dependency ${ids[i - 1]} ${i === 1 ? headEnd : "dead"}`;
    const seen = h.engine.inspect("n", id, h.now);
    if (seen?.state !== "dead" || seen.deadReason !== expected) wrong.push(`${id}: ${seen?.state} ${seen?.deadReason}`);
  }
  expect(wrong.slice(0, 5)).toEqual([]);
  expect(wrong.length).toBe(0);
}

describe(`an after chain ${chainLength} deep`, () => {
  test("the head cancelled: every item down the chain becomes a dead letter naming its own dependency, also after a restart", async () => {
    const h = new Harness();
    const ids = await chain(h);
    expect(h.state("n", ids[chainLength] as string)).toBe("waiting");
    await h.settle(h.engine.cancel("n", [ids[0] as string], h.now));
    expect(h.state("n", ids[0] as string)).toBe("ended:cancelled");
    expectChainDead(h, ids, "cancelled");
    h.check();
    await h.restart();
    expectChainDead(h, ids, "cancelled");
    h.check();
  });

  test("the head made a dead letter (deadLetter, the killItem path): the whole chain follows it", async () => {
    const h = new Harness();
    const ids = await chain(h);
    const [delivery] = await h.dequeue("n", [["dep", 1]]);
    expect(delivery?.id).toBe(ids[0] as string);
    await h.settle(h.engine.deadLetter("n", [{ receipt: delivery!.receipt, priority: null, reason: "buried" }], h.now));
    expect(h.engine.inspect("n", ids[0] as string, h.now)?.deadReason).toBe("buried");
    expectChainDead(h, ids, "dead");
    h.check();
  });
});
