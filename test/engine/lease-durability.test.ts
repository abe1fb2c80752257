// Goal: when a dequeue's reply may be sent, and what its receipts mean across
// a crash. A dequeue of only at_least_once items replies at once (its lease
// writes follow leaseWriteDelayMs later, unless an ack, nack or expiry of the
// item comes first and replaces them); one that delivers any at_most_once item
// waits until its leases are durable, and gives every item back if that
// fails. A receipt names the boot its lease was granted in, so a receipt
// issued before a crash that lost its lease is stale after the restart, even
// though the restarted server reaches the same delivery count again; a lease
// that was durable keeps its receipt good across the restart.

import { describe, expect, test } from "bun:test";
import type { DequeueDone, DequeueOutcome } from "../../src/engine/api.ts";
import { parseReceipt } from "../../src/engine/state/ids.ts";
import { leaseWriteBatchMs, leaseWriteDelayMs } from "../../src/limits.ts";
import { dequeued, Harness, item, take } from "./support/harness.ts";

const flush = () => new Promise((r) => setImmediate(r));

function done(outcome: DequeueOutcome): DequeueDone {
  if (!outcome.ok || outcome.kind !== "done") throw new Error("expected done");
  return outcome;
}

/** Whether a reply's durable promise has settled after the current turn. */
async function settledNow(reply: { durable: Promise<void> | null }): Promise<boolean> {
  let settled = false;
  reply.durable?.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await flush();
  return reply.durable === null || settled;
}

describe("when a dequeue reply may be sent", () => {
  test("only at_least_once deliveries: durable is null, and the lease write commits leaseWriteDelayMs later", async () => {
    const h = new Harness({ shards: 1 });
    const [a, b] = await h.enqueue("n", [item("t"), item("t")]);
    const reply = done(dequeued(h.engine.dequeue("n", take([["t", 2]]), h.now)));
    expect(reply.durable).toBeNull();
    expect(reply.deliveries.map((d) => d.id)).toEqual([a as string, b as string]);
    // The lease is not written yet: a crash now would lose it.
    await h.writer.drain();
    const crashed = [...[...h.store.durableCopy().loadShards()][0]!.items];
    expect(crashed.map(({ record }) => record.state)).toEqual(["pending", "pending"]);
    h.advance(leaseWriteDelayMs - 1);
    await h.writer.drain();
    expect([...[...h.store.durableCopy().loadShards()][0]!.items].map(({ record }) => record.state)).toEqual(["pending", "pending"]);
    h.advance(1);
    await h.writer.drain();
    const stored = [...[...h.store.durableCopy().loadShards()][0]!.items];
    expect(stored.map(({ record }) => [record.state, record.deliveries, record.leaseBoot])).toEqual([
      ["leased", 1, 1],
      ["leased", 1, 1],
    ]);
    h.check();
  });

  test("an ack, nack or expiry within leaseWriteDelayMs replaces the lease write: no lease is ever written", async () => {
    const h = new Harness({ shards: 1 });
    await h.enqueue("n", [item("t"), item("t"), item("t", { leaseMs: 5 })]);
    const [acked, nacked] = done(dequeued(h.engine.dequeue("n", take([["t", 3]]), h.now))).deliveries;
    await h.settleAck(h.engine.ack("n", [acked!.receipt], h.now));
    await h.settle(h.engine.nack("n", [{ receipt: nacked!.receipt, delayMs: 60_000, metadata: null }], h.now));
    h.advance(5); // the third lease expires, before its write was due
    h.advance(leaseWriteDelayMs);
    await h.writer.drain();
    const writes = h.store.commitHistory.map((c) => c.items);
    // The enqueue (3 items), the ack's delete, the nack's write, the expiry's write: no lease writes.
    expect(writes.reduce((a, b) => a + b, 0)).toBe(6);
    const stored = [...[...h.store.durableCopy().loadShards()][0]!.items].map(({ record }) => [record.state, record.attempt]);
    expect(stored).toEqual([
      ["pending", 1],
      ["pending", 1],
    ]);
    h.check();
  });

  test("each lease waits its own turn: the oldest lease's write takes those granted up to leaseWriteBatchMs after it, and no later ones", async () => {
    const h = new Harness({ shards: 1 });
    await h.enqueue("n", [item("t"), item("t"), item("t"), item("t")]);
    const storedStates = async () => {
      await h.writer.drain();
      return [...[...h.store.durableCopy().loadShards()][0]!.items].map(({ record }) => record.state);
    };
    const [first] = done(dequeued(h.engine.dequeue("n", take([["t", 1]]), h.now))).deliveries;
    h.advance(leaseWriteBatchMs);
    done(dequeued(h.engine.dequeue("n", take([["t", 1]]), h.now)));
    h.advance(1);
    const [third] = done(dequeued(h.engine.dequeue("n", take([["t", 1]]), h.now))).deliveries;
    const [fourth] = done(dequeued(h.engine.dequeue("n", take([["t", 1]]), h.now))).deliveries;
    h.advance(leaseWriteDelayMs - leaseWriteBatchMs - 2);
    expect(await storedStates()).toEqual(["pending", "pending", "pending", "pending"]);
    // The first lease is leaseWriteDelayMs old: it and the one granted leaseWriteBatchMs after it are written.
    h.advance(1);
    expect(await storedStates()).toEqual(["leased", "leased", "pending", "pending"]);
    // The third and fourth are leaseWriteDelayMs - leaseWriteBatchMs - 1 old: an ack of the third now replaces its write.
    expect(await h.settleAck(h.engine.ack("n", [third!.receipt], h.now))).toEqual({ acked: 1, stale: [] });
    h.advance(leaseWriteBatchMs);
    // The third is deleted; the fourth still waits.
    expect(await storedStates()).toEqual(["leased", "leased", "pending"]);
    // Each waits no longer than leaseWriteDelayMs.
    h.advance(1);
    expect(await storedStates()).toEqual(["leased", "leased", "leased"]);
    expect(first!.receipt).not.toBe(fourth!.receipt);
    h.check();
  });

  test("a graceful restart writes the deferred leases first: the lease and its receipt survive", async () => {
    const h = new Harness({ shards: 1 });
    const [id] = await h.enqueue("n", [item("t")]);
    const [d] = done(dequeued(h.engine.dequeue("n", take([["t", 1]]), h.now))).deliveries;
    await h.restart();
    expect(h.state("n", id as string)).toBe("leased");
    expect(await h.settleAck(h.engine.ack("n", [d!.receipt], h.now))).toEqual({ acked: 1, stale: [] });
    h.check();
  });

  test("any at_most_once delivery: the reply waits for the lease commit (mixed modes too)", async () => {
    for (const modes of [["at_most_once"], ["at_least_once", "at_most_once"], ["at_most_once", "at_least_once"]] as const) {
      const h = new Harness({ shards: 1 });
      await h.enqueue("n", modes.map((delivery) => item("t", { delivery })));
      h.store.pauseCommits();
      const reply = done(dequeued(h.engine.dequeue("n", take([["t", modes.length]]), h.now)));
      expect(reply.deliveries).toHaveLength(modes.length);
      expect(reply.durable).not.toBeNull();
      expect(await settledNow(reply)).toBe(false);
      h.store.resumeCommits();
      await reply.durable;
      h.check();
    }
  });

  test("an at_most_once dequeue whose lease commit fails gives back every item it took, attempts restored", async () => {
    const h = new Harness({ shards: 1 });
    const [least, most] = await h.enqueue("n", [item("t"), item("t", { delivery: "at_most_once" })]);
    h.store.failShard(0);
    const reply = done(dequeued(h.engine.dequeue("n", take([["t", 2]]), h.now)));
    await expect(reply.durable).rejects.toThrow();
    h.store.healShard(0);
    expect(h.state("n", least as string)).toBe("ready");
    expect(h.state("n", most as string)).toBe("ready");
    for (const d of reply.deliveries) expect(await h.settleAck(h.engine.ack("n", [d.receipt], h.now))).toEqual({ acked: 0, stale: [d.receipt] });
    const again = await h.dequeue("n", [["t", 2]]);
    expect(again.map((d) => d.attempt)).toEqual([1, 1]);
    h.check();
  });

  test("the lease commit is given to listen on, as an ack's: both replies are heard as the commit settles, before any microtask, and a failed one still gives the items back", async () => {
    const h = new Harness({ shards: 1 });
    const [least, most] = await h.enqueue("n", [item("t"), item("t", { delivery: "at_most_once" })]);
    const [first] = done(dequeued(h.engine.dequeue("n", take([["t", 1]]), h.now))).deliveries;
    expect(first!.id).toBe(least as string);
    h.store.pauseCommits();
    const acked = h.engine.ack("n", [first!.receipt], h.now);
    if (!acked.ok || acked.commit === undefined) throw new Error("expected an ack with its commit");
    const reply = done(dequeued(h.engine.dequeue("n", take([["t", 1]]), h.now)));
    expect(reply.deliveries.map((d) => d.id)).toEqual([most as string]);
    const commit = reply.commit;
    if (commit === undefined || commit === null) throw new Error("expected the lease commit");
    const heard: string[] = [];
    acked.commit.listen({
      committed: () => {
        heard.push("ack");
        queueMicrotask(() => heard.push("a microtask"));
      },
      failed: () => heard.push("ack failed"),
    });
    commit.listen({ committed: () => heard.push("dequeue"), failed: () => heard.push("dequeue failed") });
    h.store.resumeCommits();
    await h.writer.drain();
    await flush();
    expect(heard).toEqual(["ack", "dequeue", "a microtask"]);
    // A failed lease commit, listened on rather than awaited: the listener hears it, and the item is ready again.
    const [again] = await h.enqueue("n", [item("t", { delivery: "at_most_once" })]);
    h.store.failShard(0);
    const failing = done(dequeued(h.engine.dequeue("n", take([["t", 1]]), h.now)));
    let failure: unknown = null;
    failing.commit!.listen({ committed: () => undefined, failed: (error) => (failure = error) });
    await h.writer.drain().catch(() => undefined);
    await flush();
    expect(failure).not.toBeNull();
    h.store.healShard(0);
    expect(h.state("n", again as string)).toBe("ready");
    h.check();
  });

  test("an at_least_once dequeue whose lease commit fails keeps its leases: the delivery was sent", async () => {
    const h = new Harness({ shards: 1 });
    const [id] = await h.enqueue("n", [item("t")]);
    h.store.failShard(0);
    const reply = done(dequeued(h.engine.dequeue("n", take([["t", 1]]), h.now)));
    expect(reply.durable).toBeNull();
    h.advance(leaseWriteDelayMs);
    await h.writer.drain().catch(() => undefined);
    await flush();
    expect(h.engine.stats(null, h.now).engine).toMatchObject({ backgroundWriteFailures: 1 });
    expect(h.state("n", id as string)).toBe("leased");
    h.store.healShard(0);
    const receipt = reply.deliveries[0]!.receipt;
    expect(await h.settleAck(h.engine.ack("n", [receipt], h.now))).toEqual({ acked: 1, stale: [] });
    h.check();
  });

  test("a parked dequeue follows the same rule", async () => {
    const h = new Harness({ shards: 1 });
    const park = (topic: string): Promise<DequeueDone> => {
      const outcome = dequeued(h.engine.dequeue("n", take([[topic, 1]], { waitMs: 10_000 }), h.now));
      if (outcome.kind !== "parked") throw new Error("expected parked");
      return outcome.waiter;
    };
    const least = park("a");
    const most = park("b");
    await h.enqueue("n", [item("a"), item("b", { delivery: "at_most_once" })]);
    const leastReply = await least;
    const mostReply = await most;
    expect(leastReply.deliveries).toHaveLength(1);
    expect(leastReply.durable).toBeNull();
    expect(mostReply.deliveries).toHaveLength(1);
    expect(mostReply.durable).not.toBeNull();
    await mostReply.durable;
    h.check();
  });
});

describe("receipts across a crash", () => {
  test("a receipt whose lease never reached disk is stale after the restart; the new delivery's receipt differs", async () => {
    const h = new Harness({ shards: 1 });
    const [id] = await h.enqueue("n", [item("t")]);
    h.store.pauseCommits();
    const [before] = done(dequeued(h.engine.dequeue("n", take([["t", 1]]), h.now))).deliveries;
    expect(parseReceipt(before!.receipt)).toEqual({ id: id as string, deliveries: 1, boot: 1 });
    h.crash();
    expect(h.state("n", id as string)).toBe("ready");
    const [after] = await h.dequeue("n", [["t", 1]]);
    // Same item, same delivery count (the first one was forgotten), another boot.
    expect(parseReceipt(after!.receipt)).toEqual({ id: id as string, deliveries: 1, boot: 2 });
    expect(after!.receipt).not.toBe(before!.receipt);
    const stale = before!.receipt;
    expect(await h.settleAck(h.engine.ack("n", [stale], h.now))).toEqual({ acked: 0, stale: [stale] });
    expect(await h.settle(h.engine.nack("n", [{ receipt: stale, delayMs: null, metadata: null }], h.now))).toEqual({ nacked: 0, stale: [stale] });
    expect(await h.settle(h.engine.extend("n", [{ receipt: stale, leaseMs: 1000 }], h.now))).toEqual({ extended: 0, stale: [stale] });
    expect(h.state("n", id as string)).toBe("leased");
    expect(await h.settleAck(h.engine.ack("n", [after!.receipt], h.now))).toEqual({ acked: 1, stale: [] });
    h.check();
  });

  test("a durable lease keeps its receipt across the restart", async () => {
    const h = new Harness({ shards: 1 });
    const [id] = await h.enqueue("n", [item("t")]);
    const [d] = await h.dequeue("n", [["t", 1]]);
    await h.restart();
    await h.restart();
    expect(h.state("n", id as string)).toBe("leased");
    expect(await h.settle(h.engine.extend("n", [{ receipt: d!.receipt, leaseMs: 5000 }], h.now))).toEqual({ extended: 1, stale: [] });
    expect(await h.settleAck(h.engine.ack("n", [d!.receipt], h.now))).toEqual({ acked: 1, stale: [] });
    h.check();
  });

  test("deliveries after each restart carry that restart's boot", async () => {
    const h = new Harness({ shards: 1 });
    await h.enqueue("n", [item("t", { leaseMs: 10 })]);
    const boots: number[] = [];
    for (let round = 0; round < 3; round++) {
      const [d] = await h.dequeue("n", [["t", 1]]);
      boots.push(parseReceipt(d!.receipt)!.boot);
      h.advance(10);
      await h.restart();
    }
    expect(boots).toEqual([1, 2, 3]);
  });
});
