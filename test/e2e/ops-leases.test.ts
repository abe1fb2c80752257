// Goal: dequeue, ack, nack, extend, cancel and get over TCP against a real
// `orq serve`, checked against the contract: several topics with their own
// counts in one dequeue, long-poll woken by an enqueue, long-poll timing out
// empty, delivery and receipt shapes, stale receipts (never issued, already
// acked, nacked, expired, cancelled) for every receipt op, nack's delay and
// metadata, extend (longer and shorter), cancel's missing list, and get's
// states (ready, delayed, waiting, leased, dead, ended with each outcome, null).
// Time passes by long-polling the server, never by sleeping in the test.

import { describe, expect, test } from "bun:test";
import { startE2eSession, type Delivery, type State } from "../support/e2e-session.ts";
import { RawConnection } from "../support/raw-connection.ts";

const session = startE2eSession(["--shards", "4"]);
const { ok, enqueue, dequeue, get } = session;

/** Returns once the server's clock has moved `delayMs` past now (a delayed marker item, long-polled). */
async function serverTimePasses(ns: string, delayMs: number): Promise<void> {
  const topic = `clock-${Math.random().toString(36).slice(2)}`;
  const [id] = await enqueue(ns, [{ topic, delay_ms: delayMs }]);
  const got = await dequeue(ns, [{ topic }], { wait_ms: 30_000 });
  expect(got.map((d) => d.id)).toEqual([id!]);
  await ok({ op: "ack", ns, receipts: [got[0]!.receipt] });
}

const utf8 = new TextEncoder();
const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

describe("dequeue", () => {
  test("several topics, each up to its own count, in the order listed; a delivery has every contract field", async () => {
    const ns = "dq-multi";
    await enqueue(ns, Array.from({ length: 5 }, (_, i) => ({ topic: "a", payload: utf8.encode(`a${i}`), metadata: utf8.encode("m") })));
    await enqueue(ns, Array.from({ length: 5 }, (_, i) => ({ topic: "b", payload: utf8.encode(`b${i}`) })));
    const got = await dequeue(ns, [{ topic: "b", count: 2 }, { topic: "a", count: 3 }, { topic: "none", count: 5 }], { lease_ms: 10_000 });
    expect(got.map((d) => text(d.payload))).toEqual(["b0", "b1", "a0", "a1", "a2"]);
    const d = got[2]!;
    expect(Object.keys(d).sort()).toEqual(["attempt", "enqueued_at_ms", "id", "lease_expires_at_ms", "metadata", "payload", "priority", "receipt", "topic"]);
    expect(d).toMatchObject({ topic: "a", priority: 0, attempt: 1 });
    expect(text(d.metadata)).toBe("m");
    expect(typeof d.receipt).toBe("string");
    expect(d.lease_expires_at_ms).toBeGreaterThanOrEqual(d.enqueued_at_ms + 10_000);
    // count defaults to 1.
    expect((await dequeue(ns, [{ topic: "a" }])).map((x) => text(x.payload))).toEqual(["a3"]);
    // Items leased by the first dequeue are not handed out again.
    const rest = await dequeue(ns, [{ topic: "a", count: 10 }, { topic: "b", count: 10 }]);
    expect(rest.map((x) => text(x.payload))).toEqual(["a4", "b2", "b3", "b4"]);
  });

  test("with nothing ready and wait_ms: answers empty at the timeout, or with the item an enqueue brings", async () => {
    const ns = "dq-wait";
    expect(await dequeue(ns, [{ topic: "t" }], { wait_ms: 50 })).toEqual([]);
    const waiter = await RawConnection.connect(session.server.port);
    const parked = waiter.send({ op: "dequeue", ns, topics: [{ topic: "t", count: 5 }, { topic: "u" }], wait_ms: 30_000 });
    expect((await ok({ op: "ping" }, waiter)).ok).toBe(true); // the parked dequeue does not hold up a ping
    const [id] = await enqueue(ns, [{ topic: "u" }]);
    const reply = await waiter.reply(parked);
    expect((reply.items as Delivery[]).map((d) => d.id)).toEqual([id!]);
    waiter.close();
  });

  test("a parked dequeue whose connection closed takes nothing: a later enqueue stays ready for others", async () => {
    const ns = "dq-closed";
    await enqueue(ns, [{ topic: "other" }]); // a namespace exists from its first enqueue; stats then shows it
    const gone = await RawConnection.connect(session.server.port);
    gone.send({ op: "dequeue", ns, topics: [{ topic: "t" }], wait_ms: 60_000 });
    await ok({ op: "ping" }, gone);
    const parkedWaiters = async (): Promise<number> => {
      const stats = await ok({ op: "stats", ns });
      return ((stats.namespaces as Record<string, { parked_waiters: number }> | undefined)?.[ns]?.parked_waiters ?? 0) as number;
    };
    expect(await parkedWaiters()).toBe(1);
    gone.close();
    // Poll the server's own view until it has dropped the waiter (a condition, not a timer).
    for (let i = 0; i < 200 && (await parkedWaiters()) > 0; i++) await Bun.sleep(10);
    expect(await parkedWaiters()).toBe(0);
    const [id] = await enqueue(ns, [{ topic: "t" }]);
    expect(((await get(ns, [id!]))[0] as State).state).toBe("ready");
    expect((await dequeue(ns, [{ topic: "t" }])).map((d) => d.id)).toEqual([id!]);
  });

  test("pipelined on one connection, enqueue then dequeue: a long-poll dequeue gets the item once it is stored", async () => {
    const ns = "dq-pipelined";
    const e = session.conn.send({ op: "enqueue", ns, items: [{ topic: "t" }] });
    const d = session.conn.send({ op: "dequeue", ns, topics: [{ topic: "t" }], wait_ms: 30_000 });
    const ids = (await session.conn.reply(e)).ids as string[];
    expect(((await session.conn.reply(d)).items as Delivery[]).map((x) => x.id)).toEqual(ids);
  });

  test("two parked dequeues and two items: one item each", async () => {
    const ns = "dq-fair";
    const w1 = await RawConnection.connect(session.server.port);
    const w2 = await RawConnection.connect(session.server.port);
    const p1 = w1.send({ op: "dequeue", ns, topics: [{ topic: "t", count: 1 }], wait_ms: 30_000 });
    await ok({ op: "ping" }, w1);
    const p2 = w2.send({ op: "dequeue", ns, topics: [{ topic: "t", count: 1 }], wait_ms: 30_000 });
    await ok({ op: "ping" }, w2);
    const ids = await enqueue(ns, [{ topic: "t" }, { topic: "t" }]);
    const got = [...((await w1.reply(p1)).items as Delivery[]), ...((await w2.reply(p2)).items as Delivery[])];
    expect(got.map((d) => d.id).sort()).toEqual([...ids].sort());
    w1.close();
    w2.close();
  });
});

describe("ack, nack, extend: stale receipts", () => {
  test("ack: acked once; the same receipt again, a never-issued receipt and a repeat in one request are stale", async () => {
    const ns = "rc-ack";
    const [id] = await enqueue(ns, [{ topic: "t" }]);
    const [d] = await dequeue(ns, [{ topic: "t" }]);
    const bogus = `${id}:999`;
    expect(await ok({ op: "ack", ns, receipts: [d!.receipt, d!.receipt, bogus, ""] })).toMatchObject({ acked: 1, stale: [d!.receipt, bogus, ""] });
    expect(await ok({ op: "ack", ns, receipts: [d!.receipt] })).toMatchObject({ acked: 0, stale: [d!.receipt] });
    expect(await get(ns, [id!])).toEqual([{ id: id!, state: "ended", outcome: "acked" }]);
    // A receipt used in another namespace counts as never issued there.
    const [id2] = await enqueue(ns, [{ topic: "t" }]);
    const [d2] = await dequeue(ns, [{ topic: "t" }]);
    expect(await ok({ op: "ack", ns: "rc-ack-other", receipts: [d2!.receipt] })).toMatchObject({ acked: 0, stale: [d2!.receipt] });
    expect(await ok({ op: "nack", ns: "rc-ack-other", items: [{ receipt: d2!.receipt }] })).toMatchObject({ nacked: 0, stale: [d2!.receipt] });
    expect(await ok({ op: "extend", ns: "rc-ack-other", items: [{ receipt: d2!.receipt, lease_ms: 1 }] })).toMatchObject({ extended: 0, stale: [d2!.receipt] });
    expect(((await get(ns, [id2!]))[0] as State).state).toBe("leased");
  });

  test("nack: ready again with the new metadata and a higher attempt; the old receipt is then stale everywhere", async () => {
    const ns = "rc-nack";
    const [id] = await enqueue(ns, [{ topic: "t", metadata: utf8.encode("v1") }]);
    const [d1] = await dequeue(ns, [{ topic: "t" }]);
    expect(await ok({ op: "nack", ns, items: [{ receipt: d1!.receipt, metadata: utf8.encode("v2") }] })).toMatchObject({ nacked: 1, stale: [] });
    const [s] = (await get(ns, [id!])) as unknown as [Record<string, unknown>];
    expect(s).toMatchObject({ state: "ready", attempt: 1 });
    expect(text(s.metadata as Uint8Array)).toBe("v2");
    for (const op of ["nack", "extend"] as const) {
      const items = op === "nack" ? [{ receipt: d1!.receipt }] : [{ receipt: d1!.receipt, lease_ms: 1000 }];
      const reply = await ok({ op, ns, items });
      expect(reply.stale).toEqual([d1!.receipt]);
      expect(reply[op === "nack" ? "nacked" : "extended"]).toBe(0);
    }
    expect(await ok({ op: "ack", ns, receipts: [d1!.receipt] })).toMatchObject({ acked: 0, stale: [d1!.receipt] });
    const [d2] = await dequeue(ns, [{ topic: "t" }]);
    expect(d2).toMatchObject({ id: id!, attempt: 2 });
    expect(d2!.receipt).not.toBe(d1!.receipt);
    expect(text(d2!.metadata)).toBe("v2");
    // Without metadata, nack keeps it.
    await ok({ op: "nack", ns, items: [{ receipt: d2!.receipt }] });
    expect(text(((await get(ns, [id!]))[0] as unknown as { metadata: Uint8Array }).metadata)).toBe("v2");
  });

  test("nack with delay_ms: delayed for that long, then delivered again (to a long-poll) no earlier than due", async () => {
    const ns = "rc-nack-delay";
    const [id] = await enqueue(ns, [{ topic: "t" }]);
    const [d1] = await dequeue(ns, [{ topic: "t" }]);
    await ok({ op: "nack", ns, items: [{ receipt: d1!.receipt, delay_ms: 150 }] });
    const [s] = (await get(ns, [id!])) as unknown as [Record<string, number | string>];
    expect(s.state).toBe("delayed");
    expect(await dequeue(ns, [{ topic: "t" }])).toEqual([]);
    const [d2] = await dequeue(ns, [{ topic: "t" }], { wait_ms: 30_000, lease_ms: 5000 });
    expect(d2).toMatchObject({ id: id!, attempt: 2 });
    expect(d2!.lease_expires_at_ms - 5000).toBeGreaterThanOrEqual(s.deliver_at_ms as number);
  });

  test("extend: lengthens (the item outlives its first lease) and shortens (the item comes back); an expired receipt is stale", async () => {
    const ns = "rc-extend";
    const [id] = await enqueue(ns, [{ topic: "t" }]);
    const [d1] = await dequeue(ns, [{ topic: "t" }], { lease_ms: 100 });
    expect(await ok({ op: "extend", ns, items: [{ receipt: d1!.receipt, lease_ms: 60_000 }] })).toMatchObject({ extended: 1, stale: [] });
    const [extended] = (await get(ns, [id!])) as unknown as [Record<string, number | string>];
    expect(extended.lease_expires_at_ms as number).toBeGreaterThanOrEqual(d1!.lease_expires_at_ms - 100 + 60_000);
    await serverTimePasses(ns, 200); // past the first lease
    expect(((await get(ns, [id!]))[0] as State).state).toBe("leased");
    // Shorten: the lease now ends 50 ms from now, and a long-poll receives the item again.
    expect(await ok({ op: "extend", ns, items: [{ receipt: d1!.receipt, lease_ms: 50 }] })).toMatchObject({ extended: 1 });
    const [d2] = await dequeue(ns, [{ topic: "t" }], { wait_ms: 30_000 });
    expect(d2).toMatchObject({ id: id!, attempt: 2 });
    expect(await ok({ op: "extend", ns, items: [{ receipt: d1!.receipt, lease_ms: 60_000 }] })).toMatchObject({ extended: 0, stale: [d1!.receipt] });
    expect(await ok({ op: "ack", ns, receipts: [d1!.receipt, d2!.receipt] })).toMatchObject({ acked: 1, stale: [d1!.receipt] });
  });
});

describe("cancel", () => {
  test("cancels live items in any state; unknown, ended and foreign ids are missing; a leased item's receipt becomes stale", async () => {
    const ns = "cx";
    const [ready, delayed, leased, dead, acked] = await enqueue(ns, [
      { topic: "r" },
      { topic: "r", delay_ms: 60_000 },
      { topic: "l" },
      { topic: "d", max_attempts: 1 },
      { topic: "a" },
    ]);
    const [waiting] = await enqueue(ns, [{ topic: "w", after: [ready!] }]);
    const [lease] = await dequeue(ns, [{ topic: "l" }]);
    const [dl] = await dequeue(ns, [{ topic: "d" }]);
    await ok({ op: "nack", ns, items: [{ receipt: dl!.receipt }] });
    const [al] = await dequeue(ns, [{ topic: "a" }]);
    await ok({ op: "ack", ns, receipts: [al!.receipt] });
    const [foreign] = (await ok({ op: "enqueue", ns: "cx-other", items: [{ topic: "r" }] })).ids as string[];
    const reply = await ok({ op: "cancel", ns, ids: [delayed!, leased!, dead!, waiting!, acked!, foreign!, "0:123456789", "garbage", delayed!] });
    expect(reply.cancelled).toBe(4);
    expect(reply.missing).toEqual([acked!, foreign!, "0:123456789", "garbage"]);
    expect(await ok({ op: "ack", ns, receipts: [lease!.receipt] })).toMatchObject({ acked: 0, stale: [lease!.receipt] });
    const states = await get(ns, [delayed!, leased!, dead!, waiting!, ready!]);
    expect(states.slice(0, 4)).toEqual([delayed!, leased!, dead!, waiting!].map((id) => ({ id, state: "ended", outcome: "cancelled" })));
    expect((states[4] as State).state).toBe("ready");
    expect(((await get("cx-other", [foreign!]))[0] as State).state).toBe("ready");
  });
});

describe("get", () => {
  test("every state with its fields, in request order; null for unknown, malformed and foreign ids", async () => {
    const ns = "gt";
    const requires = { gpu: { in: ["a100"] }, mem: { gte: 8 } };
    const [ready, delayed, leased, dead] = await enqueue(ns, [
      { topic: "r", priority: -7, payload: utf8.encode("body"), requires, key: "k1" },
      { topic: "r", delay_ms: 60_000 },
      { topic: "l" },
      { topic: "d", max_attempts: 1 },
    ]);
    const [waiting] = await enqueue(ns, [{ topic: "w", after: [leased!] }]);
    const [lease] = await dequeue(ns, [{ topic: "l" }], { lease_ms: 60_000 });
    const [dl] = await dequeue(ns, [{ topic: "d" }]);
    await ok({ op: "nack", ns, items: [{ receipt: dl!.receipt }] });
    const [foreign] = (await ok({ op: "enqueue", ns: "gt-other", items: [{ topic: "r" }] })).ids as string[];
    const states = (await get(ns, ["9:99999999", ready!, delayed!, leased!, dead!, waiting!, foreign!, "not-an-id", ready!])) as Array<Record<string, unknown> | null>;
    expect(states.length).toBe(9);
    expect(states[0]).toBeNull();
    expect(states[6]).toBeNull();
    expect(states[7]).toBeNull();
    expect(states[1]).toMatchObject({ id: ready!, topic: "r", state: "ready", priority: -7, attempt: 0, requires, key: "k1" });
    expect(text(states[1]!.payload as Uint8Array)).toBe("body");
    expect(states[8]).toEqual(states[1]!);
    expect(states[2]).toMatchObject({ id: delayed!, state: "delayed" });
    expect(states[2]!.deliver_at_ms).toBe((states[2]!.enqueued_at_ms as number) + 60_000);
    expect(states[3]).toMatchObject({ id: leased!, state: "leased", attempt: 1, lease_expires_at_ms: lease!.lease_expires_at_ms });
    expect(states[4]).toMatchObject({ id: dead!, state: "dead", attempt: 1, dead_reason: "max_attempts" });
    expect(states[5]).toMatchObject({ id: waiting!, state: "waiting", after: [leased!] });
    for (const s of [states[1], states[2], states[4], states[5]]) expect(s).not.toHaveProperty("lease_expires_at_ms");
    for (const s of [states[1], states[2], states[3], states[5]]) expect(s).not.toHaveProperty("dead_reason");
    // Ended: acked (and the waiting item becomes ready), cancelled.
    await ok({ op: "ack", ns, receipts: [lease!.receipt] });
    await ok({ op: "cancel", ns, ids: [delayed!] });
    const ended = await get(ns, [leased!, delayed!, waiting!]);
    expect(ended.slice(0, 2)).toEqual([
      { id: leased!, state: "ended", outcome: "acked" },
      { id: delayed!, state: "ended", outcome: "cancelled" },
    ]);
    expect((ended[2] as State).state).toBe("ready");
  });
});
