// Goal: hello, ping and enqueue over TCP against a real `orq serve`, checked
// against the contract: hello's fields and limits, ids in request order,
// idempotency keys (within a batch, across requests, per topic, freed when the
// item ends), delay_ms / deliver_at_ms (delayed, then delivered no earlier
// than due), ttl_ms (ended "expired" in any state), delivery order (priority,
// then deliver_at_ms, then enqueue order), at_most_once expiry, and `after`.
// Waiting for time to pass is done by long-polling the server (a dequeue with
// wait_ms on an item delayed past the deadline of interest), never by sleeping.

import { describe, expect, test } from "bun:test";
import { startE2eSession, type Delivery, type State } from "../support/e2e-session.ts";
import { RawConnection } from "../support/raw-connection.ts";
import { ServerProcess } from "../support/server-process.ts";

const session = startE2eSession(["--shards", "4"]);
const { ok, enqueue, dequeue, get } = session;

async function nowMs(): Promise<number> {
  return (await ok({ op: "ping" })).now_ms as number;
}

/**
 * Returns once the server's clock has passed `delayMs` from now: enqueue a
 * marker item delayed that long and long-poll for it. The returned delivery
 * proves the server's now >= the marker's deliver_at_ms.
 */
async function serverTimePasses(ns: string, delayMs: number): Promise<number> {
  const topic = `clock-${Math.random().toString(36).slice(2)}`;
  const [id] = await enqueue(ns, [{ topic, delay_ms: delayMs }]);
  const [state] = await get(ns, [id!]);
  const got = await dequeue(ns, [{ topic }], { wait_ms: 30_000 });
  expect(got.map((d) => d.id)).toEqual([id!]);
  await ok({ op: "ack", ns, receipts: [got[0]!.receipt] });
  return (state as unknown as { deliver_at_ms: number }).deliver_at_ms;
}

const utf8 = new TextEncoder();

describe("hello and ping", () => {
  test("hello reports server, version, protocol, node id, shards and every limit", async () => {
    const hello = await ok({ op: "hello", protocol: 1, client: { name: "e2e", extra: [1, 2] } });
    expect(hello.server).toBe("orq");
    expect(hello.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(hello.protocol).toBe(1);
    expect(typeof hello.node_id).toBe("string");
    expect((hello.node_id as string).length).toBeGreaterThan(0);
    expect(hello.shards).toBe(4);
    expect(hello.max_frame_bytes).toBe(4 * 1024 * 1024);
    expect(hello.limits).toEqual({
      payload_bytes_max: 10 * 1024,
      metadata_bytes_max: 1024,
      items_per_enqueue_max: 1000,
      count_per_dequeue_max: 1000,
      topic_bytes_max: 255,
      wait_ms_max: 300_000,
      lease_ms_max: 12 * 60 * 60 * 1000,
      ids_per_request_max: 1000,
    });
    // hello may be sent again; the node id is stable.
    expect((await ok({ op: "hello", protocol: 1 })).node_id).toBe(hello.node_id);
  });

  test("ping answers the server's clock, an integer that does not go backwards", async () => {
    const first = await nowMs();
    const second = await nowMs();
    expect(Number.isInteger(first)).toBe(true);
    expect(second).toBeGreaterThanOrEqual(first);
    expect(Math.abs(first - Date.now())).toBeLessThan(60_000); // same host: the same epoch, not a monotonic counter
  });
});

describe("outcome retention (a server with outcome_retention_ms at its 1 s minimum)", () => {
  test("an ended item's outcome is kept for the retention, then get answers null and after answers NOT_FOUND", async () => {
    const short = await ServerProcess.start({ args: ["--shards", "1", "--outcome-retention-ms", "1000"] });
    const c = await RawConnection.connect(short.port);
    try {
      const ns = "ret";
      const [id] = (await c.call({ op: "enqueue", ns, items: [{ topic: "t" }] })).ids as string[];
      const [d] = (await c.call({ op: "dequeue", ns, topics: [{ topic: "t" }] })).items as Delivery[];
      await c.call({ op: "ack", ns, receipts: [d!.receipt] });
      expect((await c.call({ op: "get", ns, ids: [id!] })).items).toEqual([{ id: id!, state: "ended", outcome: "acked" }]);
      // Let 1.2 s pass on the server's clock: long-poll a marker delayed that long.
      await c.call({ op: "enqueue", ns, items: [{ topic: "clock", delay_ms: 1200 }] });
      expect(((await c.call({ op: "dequeue", ns, topics: [{ topic: "clock" }], wait_ms: 30_000 })).items as unknown[]).length).toBe(1);
      expect((await c.call({ op: "get", ns, ids: [id!] })).items).toEqual([null]);
      expect((await c.call({ op: "enqueue", ns, items: [{ topic: "t", after: [id!] }] })).error!.code).toBe("NOT_FOUND");
    } finally {
      c.close();
      await short.cleanup();
    }
  });
});

describe("enqueue", () => {
  test("ids come back one per item in request order; get confirms each id's topic and payload", async () => {
    const items = Array.from({ length: 50 }, (_, i) => ({ topic: `t${i % 3}`, payload: utf8.encode(`p${i}`) }));
    const ids = await enqueue("enq-ids", items);
    expect(ids.length).toBe(50);
    expect(new Set(ids).size).toBe(50);
    const states = await get("enq-ids", ids);
    states.forEach((s, i) => {
      expect(s).toMatchObject({ id: ids[i], topic: `t${i % 3}`, state: "ready", attempt: 0, priority: 0 });
      expect(new TextDecoder().decode((s as unknown as { payload: Uint8Array }).payload)).toBe(`p${i}`);
    });
  });

  test("defaults: priority 0, empty payload and metadata, deliver_at_ms = enqueued_at_ms, no optional fields", async () => {
    const before = await nowMs();
    const [id] = await enqueue("enq-defaults", [{ topic: "t" }]);
    const after = await nowMs();
    const [s] = (await get("enq-defaults", [id!])) as unknown as [Record<string, unknown>];
    expect(s).toMatchObject({ id, topic: "t", state: "ready", priority: 0, attempt: 0 });
    expect((s.payload as Uint8Array).length).toBe(0);
    expect((s.metadata as Uint8Array).length).toBe(0);
    expect(s.deliver_at_ms).toBe(s.enqueued_at_ms);
    expect(s.enqueued_at_ms as number).toBeGreaterThanOrEqual(before);
    expect(s.enqueued_at_ms as number).toBeLessThanOrEqual(after);
    for (const absent of ["lease_expires_at_ms", "requires", "after", "key", "dead_reason"]) expect(s).not.toHaveProperty(absent);
  });

  test("an idempotency key returns the live item's id: across requests, within a batch, per topic; freed once the item ends", async () => {
    const ns = "enq-key";
    const [first, other, dup] = await enqueue(ns, [
      { topic: "t", key: "k", payload: utf8.encode("one") },
      { topic: "u", key: "k" }, // same key, other topic: a different item
      { topic: "t", key: "k", payload: utf8.encode("ignored") }, // same batch: the earlier item's id
    ]);
    expect(other).not.toBe(first);
    expect(dup).toBe(first);
    expect(await enqueue(ns, [{ topic: "t", key: "k" }])).toEqual([first!]);
    expect(await enqueue("enq-key-other-ns", [{ topic: "t", key: "k" }])).not.toEqual([first!]);
    const [s] = (await get(ns, [first!])) as unknown as [Record<string, unknown>];
    expect(s.key).toBe("k");
    expect(new TextDecoder().decode(s.payload as Uint8Array)).toBe("one");
    const topics = (await ok({ op: "topics", ns })).topics as Array<{ topic: string; ready: number }>;
    expect(topics.find((t) => t.topic === "t")!.ready).toBe(1);
    // A dead letter still holds its key.
    const [delivered] = await dequeue(ns, [{ topic: "t" }]);
    expect(delivered!.id).toBe(first!);
    expect(await enqueue(ns, [{ topic: "t", key: "k" }])).toEqual([first!]); // leased: still live
    await ok({ op: "ack", ns, receipts: [delivered!.receipt] });
    const [fresh] = await enqueue(ns, [{ topic: "t", key: "k" }]);
    expect(fresh).not.toBe(first);
  });

  test("a dead letter keeps its key until it ends", async () => {
    const ns = "enq-key-dead";
    const [id] = await enqueue(ns, [{ topic: "t", key: "d", max_attempts: 1 }]);
    const [d] = await dequeue(ns, [{ topic: "t" }]);
    await ok({ op: "nack", ns, items: [{ receipt: d!.receipt }] });
    expect(((await get(ns, [id!]))[0] as State).state).toBe("dead");
    expect(await enqueue(ns, [{ topic: "t", key: "d" }])).toEqual([id!]);
    await ok({ op: "cancel", ns, ids: [id!] });
    expect(await enqueue(ns, [{ topic: "t", key: "d" }])).not.toEqual([id!]);
  });

  test("delay_ms: delayed until due, then a long-poll gets it no earlier than deliver_at_ms", async () => {
    const ns = "enq-delay";
    const [id] = await enqueue(ns, [{ topic: "t", delay_ms: 150 }]);
    const [s] = (await get(ns, [id!])) as unknown as [Record<string, number | string>];
    expect(s.state).toBe("delayed");
    expect(s.deliver_at_ms).toBe((s.enqueued_at_ms as number) + 150);
    expect(await dequeue(ns, [{ topic: "t" }])).toEqual([]);
    const got = await dequeue(ns, [{ topic: "t" }], { wait_ms: 30_000, lease_ms: 5000 });
    expect(got.map((d) => d.id)).toEqual([id!]);
    expect(got[0]!.lease_expires_at_ms - 5000).toBeGreaterThanOrEqual(s.deliver_at_ms as number);
  });

  test("deliver_at_ms: in the past is ready at once; in the future is delayed; both delay_ms and deliver_at_ms is BAD_REQUEST", async () => {
    const ns = "enq-at";
    const now = await nowMs();
    const [past, future] = await enqueue(ns, [
      { topic: "t", deliver_at_ms: now - 10_000 },
      { topic: "t", deliver_at_ms: now + 60_000 },
    ]);
    const states = (await get(ns, [past!, future!])) as Array<Record<string, unknown>>;
    expect(states.map((s) => s.state)).toEqual(["ready", "delayed"]);
    expect(states[0]!.deliver_at_ms).toBe(now - 10_000);
    expect(states[1]!.deliver_at_ms).toBe(now + 60_000);
    const both = await session.conn.call({ op: "enqueue", ns, items: [{ topic: "t" }, { topic: "t", delay_ms: 1, deliver_at_ms: now }] });
    expect(both.error).toMatchObject({ code: "BAD_REQUEST", details: { field: "items[1].deliver_at_ms", index: 1 } });
  });

  test("delivery order: priority ascending, then deliver_at_ms ascending, then enqueue order", async () => {
    const ns = "enq-order";
    const now = await nowMs();
    const items = [
      { topic: "t", priority: 5, payload: utf8.encode("p5-first") },
      { topic: "t", priority: -3, payload: utf8.encode("m3-later-due"), deliver_at_ms: now - 1000 },
      { topic: "t", priority: 5, payload: utf8.encode("p5-second") },
      { topic: "t", priority: -3, payload: utf8.encode("m3-earlier-due"), deliver_at_ms: now - 5000 },
      { topic: "t", priority: 2 ** 31 - 1, payload: utf8.encode("max") },
      { topic: "t", priority: -(2 ** 31), payload: utf8.encode("min") },
      { topic: "t", payload: utf8.encode("zero") },
    ];
    await enqueue(ns, items.slice(0, 4));
    await enqueue(ns, items.slice(4));
    const got = await dequeue(ns, [{ topic: "t", count: 10 }]);
    expect(got.map((d) => new TextDecoder().decode(d.payload))).toEqual(["min", "m3-earlier-due", "m3-later-due", "zero", "p5-first", "p5-second", "max"]);
    expect(got.map((d) => d.priority)).toEqual([-(2 ** 31), -3, -3, 0, 5, 5, 2 ** 31 - 1]);
  });

  test("ttl_ms: an item ends \"expired\" once its TTL passes, in the ready, delayed, leased and dead states", async () => {
    const ns = "enq-ttl";
    const [ready, delayed, leased, keep] = await enqueue(ns, [
      { topic: "t", ttl_ms: 100 },
      { topic: "d", ttl_ms: 100, delay_ms: 60_000 },
      { topic: "l", ttl_ms: 100 },
      { topic: "t", ttl_ms: 60_000 },
    ]);
    const [dead] = await enqueue(ns, [{ topic: "x", ttl_ms: 100, max_attempts: 1 }]);
    const [lease] = await dequeue(ns, [{ topic: "l" }], { lease_ms: 200 });
    expect(lease!.id).toBe(leased!);
    const [x] = await dequeue(ns, [{ topic: "x" }]);
    await ok({ op: "nack", ns, items: [{ receipt: x!.receipt }] });
    expect(((await get(ns, [dead!]))[0] as State).state).toBe("dead");
    await serverTimePasses(ns, 400); // past every TTL above and the 200 ms lease
    expect(await get(ns, [dead!])).toEqual([{ id: dead!, state: "ended", outcome: "expired" }]);
    const states = await get(ns, [ready!, delayed!, leased!, keep!]);
    expect(states.slice(0, 3)).toEqual([
      { id: ready!, state: "ended", outcome: "expired" },
      { id: delayed!, state: "ended", outcome: "expired" },
      { id: leased!, state: "ended", outcome: "expired" },
    ]);
    expect((states[3] as State).state).toBe("ready");
    const ack = await ok({ op: "ack", ns, receipts: [lease!.receipt] });
    expect(ack).toMatchObject({ acked: 0, stale: [lease!.receipt] });
  });

  test("ttl_ms on a leased item: it may still be acked while its lease lasts (outcome acked)", async () => {
    const ns = "enq-ttl-ack";
    const [id] = await enqueue(ns, [{ topic: "t", ttl_ms: 50 }]);
    const [lease] = await dequeue(ns, [{ topic: "t" }], { lease_ms: 60_000 });
    await serverTimePasses(ns, 150);
    expect(((await get(ns, [id!]))[0] as State).state).toBe("leased");
    expect(await ok({ op: "ack", ns, receipts: [lease!.receipt] })).toMatchObject({ acked: 1, stale: [] });
    expect(await get(ns, [id!])).toEqual([{ id: id!, state: "ended", outcome: "acked" }]);
  });

  test("at_most_once: an expired lease ends the item (expired); at_least_once: it is delivered again", async () => {
    const ns = "enq-amo";
    const [amo, alo] = await enqueue(ns, [
      { topic: "t", delivery: "at_most_once", lease_ms: 100 },
      { topic: "t", delivery: "at_least_once", lease_ms: 100 },
    ]);
    const first = await dequeue(ns, [{ topic: "t", count: 2 }]);
    expect(first.map((d) => d.id)).toEqual([amo!, alo!]);
    for (const d of first) expect(d.lease_expires_at_ms).toBeGreaterThanOrEqual(d.enqueued_at_ms + 100); // the item's lease_ms
    const again = await dequeue(ns, [{ topic: "t", count: 2 }], { wait_ms: 30_000 });
    expect(again.map((d) => [d.id, d.attempt])).toEqual([[alo!, 2]]);
    expect(again[0]!.receipt).not.toBe(first[1]!.receipt);
    expect(await get(ns, [amo!])).toEqual([{ id: amo!, state: "ended", outcome: "expired" }]);
  });

  test("at_most_once and nack: ready again; a nack of the last attempt makes a dead letter", async () => {
    const ns = "enq-amo-nack";
    const [id] = await enqueue(ns, [{ topic: "t", delivery: "at_most_once", max_attempts: 2 }]);
    const [d1] = await dequeue(ns, [{ topic: "t" }]);
    expect(await ok({ op: "nack", ns, items: [{ receipt: d1!.receipt }] })).toMatchObject({ nacked: 1 });
    expect(((await get(ns, [id!]))[0] as State).state).toBe("ready");
    const [d2] = await dequeue(ns, [{ topic: "t" }]);
    expect(d2!.attempt).toBe(2);
    await ok({ op: "nack", ns, items: [{ receipt: d2!.receipt }] });
    expect((await get(ns, [id!]))[0]).toMatchObject({ state: "dead", attempt: 2, dead_reason: "max_attempts" });
  });

  test("after: waiting until every dependency is acked; an acked dependency is satisfied at once; a failed one makes a dead letter", async () => {
    const ns = "enq-after";
    const [a, b] = await enqueue(ns, [{ topic: "dep" }, { topic: "dep" }]);
    const [child] = await enqueue(ns, [{ topic: "t", after: [a!, b!] }]);
    const [s] = (await get(ns, [child!])) as unknown as [Record<string, unknown>];
    expect(s).toMatchObject({ state: "waiting", after: [a!, b!] });
    const deps = await dequeue(ns, [{ topic: "dep", count: 2 }]);
    await ok({ op: "ack", ns, receipts: [deps[0]!.receipt] });
    expect(((await get(ns, [child!]))[0] as State).state).toBe("waiting");
    // A parked dequeue is woken by the last dependency's ack.
    const parked = session.conn.send({ op: "dequeue", ns, topics: [{ topic: "t" }], wait_ms: 30_000 });
    await ok({ op: "ack", ns, receipts: [deps[1]!.receipt] });
    const woke = await session.conn.reply(parked);
    expect((woke.items as Delivery[]).map((d) => d.id)).toEqual([child!]);
    // Acked dependencies are satisfied at once.
    const [late] = await enqueue(ns, [{ topic: "t2", after: [a!] }]);
    expect(((await get(ns, [late!]))[0] as State).state).toBe("ready");
    // A cancelled dependency kills the waiting item.
    const [c] = await enqueue(ns, [{ topic: "dep" }]);
    const [victim] = await enqueue(ns, [{ topic: "t3", after: [c!] }]);
    await ok({ op: "cancel", ns, ids: [c!] });
    const [dead] = (await get(ns, [victim!])) as unknown as [Record<string, unknown>];
    expect(dead.state).toBe("dead");
    expect(dead.dead_reason).toContain(c!);
    // A dependency that becomes a dead letter kills the waiting item, naming it.
    const [fragile] = await enqueue(ns, [{ topic: "dep2", max_attempts: 1 }]);
    const [victim2] = await enqueue(ns, [{ topic: "t4", after: [fragile!] }]);
    const [fd] = await dequeue(ns, [{ topic: "dep2" }]);
    await ok({ op: "nack", ns, items: [{ receipt: fd!.receipt }] });
    const [dead2] = (await get(ns, [victim2!])) as unknown as [Record<string, unknown>];
    expect(dead2).toMatchObject({ state: "dead" });
    expect(dead2.dead_reason).toContain(fragile!);
    // An id of another namespace counts as unknown.
    const foreign = await session.conn.call({ op: "enqueue", ns: "enq-after-other", items: [{ topic: "t", after: [a!] }] });
    expect(foreign.error!.code).toBe("NOT_FOUND");
  });
});
