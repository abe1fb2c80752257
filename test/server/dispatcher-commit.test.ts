// Goal: a reply that waits for a commit (an ack's, or a dequeue's lease
// commit, through OpOutcome's commit) listens on it: the replies of one commit
// are all queued as it settles; it is sent only once the commit settles, in commit order, and
// counts as in flight until then; a failed shard answers UNAVAILABLE with a
// retry hint to each request whose writes it held; a commit with nothing to
// write answers at once; an AssertionError failing a commit stops the process
// (the fatal handler) rather than being answered; pipelined acks and
// dequeues each answer with their own reply, though the handlers return one
// lent outcome (op-types.ts, LentReply). Commits come from a real
// GroupCommitter over the faulty MemoryStore.

import { describe, expect, test } from "bun:test";
import { Encoder } from "@msgpack/msgpack";
import { AssertionError } from "../../src/lib/assert.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import type { Delivery } from "../../src/engine/api.ts";
import { AckReply, DeliveriesReply } from "../../src/protocol/reply-encoder.ts";
import { GroupCommitter } from "../../src/storage/group-commit.ts";
import { MemoryStore } from "../../src/storage/memory/memory-store.ts";
import { FakeSource, setup } from "../support/dispatcher-fixture.ts";

const encoder = new Encoder();

describe("replies that wait for a commit", () => {
  test("a dequeue's lease commit is listened on too: the replies of one commit are all queued as it settles, before any microtask, so they leave in one write", async () => {
    const { dispatcher, engine } = setup();
    const store = new MemoryStore({ shards: 1 });
    const writer = new GroupCommitter(store, { clock: new ManualClock() });
    const written = () => {
      const set = writer.begin();
      set.ackItem("n", 0, writer.nextKey(), 1000);
      return set.close();
    };
    engine.ackCommit = written;
    engine.dequeueCommit = written;
    // Notes, at the first reply, how many replies were queued by the time a microtask runs (the output queue's flush).
    const source = new (class extends FakeSource {
      queuedBeforeMicrotask = -1;
      override send(reply: Record<string, unknown>): void {
        if (this.sent.length === 0) queueMicrotask(() => (this.queuedBeforeMicrotask = this.sent.length));
        super.send(reply);
      }
    })();
    store.pauseCommits();
    dispatcher.handleFrame(source, encoder.encode({ id: 1, op: "ack", ns: "n", receipts: ["r1"] }));
    dispatcher.handleFrame(source, encoder.encode({ id: 2, op: "dequeue", ns: "n", topics: [{ topic: "t", count: 1 }] }));
    dispatcher.handleFrame(source, encoder.encode({ id: 3, op: "ack", ns: "n", receipts: ["r3"] }));
    await Bun.sleep(0);
    expect(source.sent).toEqual([]);
    store.resumeCommits();
    await writer.drain();
    await Bun.sleep(0);
    expect(source.sent.map((reply) => reply.id)).toEqual([1, 2, 3]);
    expect(source.queuedBeforeMicrotask).toBe(3);
    expect(source.inflight).toBe(0);
  });

  test("an ack waits for its commit, listened on: replies come only after it, in commit order; a failed shard answers UNAVAILABLE to each of its waiters", async () => {
    const { dispatcher, engine } = setup();
    const store = new MemoryStore({ shards: 2 });
    const writer = new GroupCommitter(store, { clock: new ManualClock() });
    let shard = 0;
    engine.ackCommit = () => {
      const set = writer.begin();
      set.ackItem("n", shard, writer.nextKey(), 1000);
      return set.close();
    };
    const source = new FakeSource();
    store.pauseCommits();
    dispatcher.handleFrame(source, encoder.encode({ id: 1, op: "ack", ns: "n", receipts: ["r1"] }));
    await Bun.sleep(0);
    // The first commit is in flight; two more acks gather behind it, one on a failing shard.
    store.failShard(1, new Error("EIO"));
    dispatcher.handleFrame(source, encoder.encode({ id: 2, op: "ack", ns: "n", receipts: ["r2"] }));
    shard = 1;
    dispatcher.handleFrame(source, encoder.encode({ id: 3, op: "ack", ns: "n", receipts: ["r3"] }));
    await Bun.sleep(0);
    expect(source.sent).toEqual([]);
    expect(source.inflight).toBe(3);
    store.resumeCommits();
    await writer.drain();
    expect(source.sent.map((reply) => [reply.id, reply.ok])).toEqual([
      [1, true],
      [2, true],
      [3, false],
    ]);
    expect(source.sent[0]).toMatchObject({ id: 1, ok: true, acked: 1, stale: [] });
    expect(source.last()).toMatchObject({ id: 3, ok: false, error: { code: "UNAVAILABLE", details: { retry_after_ms: expect.any(Number) } } });
    expect(source.inflight).toBe(0);
    // Nothing to write: answered at once, in this turn.
    engine.ackCommit = () => writer.begin().close();
    dispatcher.handleFrame(source, encoder.encode({ id: 4, op: "ack", ns: "n", receipts: ["r4"] }));
    expect(source.last()).toMatchObject({ id: 4, ok: true, acked: 1 });
    expect(source.inflight).toBe(0);
  });

  test("an AssertionError failing a reply's commit goes to the fatal handler, unanswered", () => {
    const { dispatcher, engine, fatal } = setup();
    engine.ackCommit = () => ({
      listen: (listener) => listener.failed(new AssertionError("record broken")),
      promise: () => Promise.reject(new AssertionError("record broken")),
    });
    const source = new FakeSource();
    dispatcher.handleFrame(source, encoder.encode({ id: 5, op: "ack", ns: "n", receipts: ["r"] }));
    expect(source.sent).toEqual([]);
    expect(fatal.map((f) => [f.error instanceof AssertionError, f.context])).toEqual([[true, { op: "ack", request_id: 5, connection: 3 }]]);
  });

  test("pipelined acks each answer their own id, count and reply object; dequeues between them, parked or not, keep theirs (the lent outcome is read at once)", async () => {
    const { dispatcher, engine } = setup();
    const store = new MemoryStore({ shards: 1 });
    const writer = new GroupCommitter(store, { clock: new ManualClock() });
    engine.ackCommit = () => {
      const set = writer.begin();
      set.ackItem("n", 0, writer.nextKey(), 1000);
      return set.close();
    };
    engine.parkDequeues = true;
    const source = new FakeSource();
    const frame = (request: Record<string, unknown>) => dispatcher.handleFrame(source, encoder.encode({ ns: "n", ...request }));
    store.pauseCommits();
    frame({ id: 1, op: "ack", receipts: ["a"] });
    frame({ id: 2, op: "dequeue", topics: [{ topic: "t" }], wait_ms: 1000 });
    frame({ id: 3, op: "ack", receipts: ["b", "c"] });
    frame({ id: 4, op: "dequeue", topics: [{ topic: "t" }], wait_ms: 0 });
    expect(source.sent.map((reply) => reply.id)).toEqual([4]);
    // The parked dequeue settles while another ack is handled: its reply is its own, not the ack's.
    const delivery = { id: "0:9", receipt: "0:9:1:1" } as Delivery;
    engine.parked[0]!.resolve({ ok: true, kind: "done", deliveries: [delivery], durable: null });
    frame({ id: 5, op: "ack", receipts: ["d", "e", "f"] });
    await Bun.sleep(0);
    expect(source.sent.map((reply) => reply.id)).toEqual([4, 2]);
    const [immediate, settled] = source.sent as [DeliveriesReply, DeliveriesReply];
    expect([immediate, settled].map((reply) => [reply instanceof DeliveriesReply, reply.deliveries.length])).toEqual([
      [true, 0],
      [true, 1],
    ]);
    expect(settled.deliveries[0]).toBe(delivery);
    store.resumeCommits();
    await writer.drain();
    const acks = source.sent.slice(2) as AckReply[];
    expect(acks.map((reply) => [reply instanceof AckReply, reply.id, reply.acked, reply.stale])).toEqual([
      [true, 1, 1, []],
      [true, 3, 2, []],
      [true, 5, 3, []],
    ]);
    expect(new Set(acks).size).toBe(3);
    expect(source.inflight).toBe(0);
  });
});
