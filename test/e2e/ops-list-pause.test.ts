// Goal: list, pause and resume over TCP against a real `orq serve`, checked
// against the contract: list's states, orders, paging with `next`, an unknown
// topic; pause stopping deliveries and parked dequeues, `topics` showing
// `paused` and `paused_until_ms`, resume serving parked dequeues; each op's
// field errors (BAD_REQUEST with details.field, TOO_LARGE) at limit-1, limit
// and limit+1; the TypeScript client's methods; and a pause that survives a
// crash and restart of the server.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OrqClient } from "../../src/client/index.ts";
import { RawConnection, type ReplyMap } from "../support/raw-connection.ts";
import { ServerProcess } from "../support/server-process.ts";

let server: ServerProcess;
let conn: RawConnection;

beforeAll(async () => {
  server = await ServerProcess.start({ args: ["--shards", "4"] });
  conn = await RawConnection.connect(server.port);
});

afterAll(async () => {
  conn?.close();
  await server?.cleanup();
});

async function ok(request: Record<string, unknown>): Promise<ReplyMap> {
  const reply = await conn.call(request);
  if (!reply.ok) throw new Error(`${String(request.op)} failed: ${JSON.stringify(reply.error)}`);
  return reply;
}

async function refused(request: Record<string, unknown>): Promise<{ code: string; field: unknown }> {
  const reply = await conn.call(request);
  expect(reply.ok).toBe(false);
  return { code: reply.error!.code, field: reply.error!.details?.field };
}

type Listed = { id: string; state: string; priority: number; payload: Uint8Array; dead_reason?: string };

async function listAll(request: Record<string, unknown>): Promise<Listed[]> {
  const out: Listed[] = [];
  let after: string | undefined;
  for (let pages = 0; pages < 1000; pages++) {
    const reply = await ok({ op: "list", ...request, ...(after === undefined ? {} : { after }) });
    out.push(...(reply.items as Listed[]));
    if (reply.next === undefined) return out;
    expect(typeof reply.next).toBe("string");
    after = reply.next as string;
  }
  throw new Error("listing did not end");
}

async function topicEntry(ns: string, topic: string): Promise<Record<string, unknown> | undefined> {
  const reply = await ok({ op: "topics", ns, prefix: topic });
  return (reply.topics as Array<Record<string, unknown>>).find((t) => t.topic === topic);
}

describe("list", () => {
  test("ready items in delivery order, the others in enqueue order, by state and all together", async () => {
    const ns = "ls-order";
    const ids = (await ok({
      op: "enqueue",
      ns,
      items: [
        { topic: "t", priority: 5, payload: new Uint8Array([1]) },
        { topic: "t", priority: -3 },
        { topic: "t", delay_ms: 60_000 },
        { topic: "t", priority: 1 },
        { topic: "t", max_attempts: 1, priority: -9 },
      ],
    })).ids as string[];
    const [d] = (await ok({ op: "dequeue", ns, topics: [{ topic: "t" }] })).items as Array<{ id: string; receipt: string }>;
    expect(d!.id).toBe(ids[4]!);
    await ok({ op: "nack", ns, items: [{ receipt: d!.receipt }] });
    const ready = await listAll({ ns, topic: "t", state: "ready", limit: 1 });
    expect(ready.map((s) => s.id)).toEqual([ids[1]!, ids[3]!, ids[0]!]);
    expect(ready[2]!.payload).toEqual(new Uint8Array([1]));
    expect((await listAll({ ns, topic: "t", state: "delayed" })).map((s) => s.id)).toEqual([ids[2]!]);
    const dead = await listAll({ ns, topic: "t", state: "dead" });
    expect(dead.map((s) => [s.id, s.state])).toEqual([[ids[4]!, "dead"]]);
    expect(await listAll({ ns, topic: "t", state: "leased" })).toEqual([]);
    const all = await listAll({ ns, topic: "t", limit: 2 });
    expect(all.map((s) => s.id)).toEqual([ids[1]!, ids[3]!, ids[0]!, ids[2]!, ids[4]!]);
    // The items are what get shows.
    const got = (await ok({ op: "get", ns, ids: all.map((s) => s.id) })).items;
    expect(all).toEqual(got as Listed[]);
  });

  test("limit defaults to 100 and pages with next; an unknown topic lists nothing", async () => {
    const ns = "ls-paging";
    await ok({ op: "enqueue", ns, items: Array.from({ length: 150 }, (_, i) => ({ topic: "t", priority: i })) });
    const first = await ok({ op: "list", ns, topic: "t" });
    expect((first.items as Listed[]).length).toBe(100);
    const second = await ok({ op: "list", ns, topic: "t", after: first.next });
    expect((second.items as Listed[]).map((s) => s.priority)).toEqual(Array.from({ length: 50 }, (_, i) => 100 + i));
    expect(second.next).toBeUndefined();
    const exact = await ok({ op: "list", ns, topic: "t", limit: 150 });
    expect(exact.next).toBeUndefined();
    expect(await ok({ op: "list", ns, topic: "nothing-here" })).toMatchObject({ items: [] });
    expect((await ok({ op: "list", ns, topic: "nothing-here" })).next).toBeUndefined();
  });

  test("field errors: topic, state, limit (0, 1000, 1001), after", async () => {
    const ns = "ls-errors";
    expect(await refused({ op: "list", ns })).toEqual({ code: "BAD_REQUEST", field: "topic" });
    expect(await refused({ op: "list", topic: "t" })).toEqual({ code: "BAD_REQUEST", field: "ns" });
    expect(await refused({ op: "list", ns, topic: "x".repeat(256) })).toEqual({ code: "TOO_LARGE", field: "topic" });
    expect((await ok({ op: "list", ns, topic: "x".repeat(255) })).items).toEqual([]);
    expect(await refused({ op: "list", ns, topic: "t", state: "ended" })).toEqual({ code: "BAD_REQUEST", field: "state" });
    expect(await refused({ op: "list", ns, topic: "t", state: 1 })).toEqual({ code: "BAD_REQUEST", field: "state" });
    expect(await refused({ op: "list", ns, topic: "t", limit: 0 })).toEqual({ code: "BAD_REQUEST", field: "limit" });
    expect(await refused({ op: "list", ns, topic: "t", limit: 1.5 })).toEqual({ code: "BAD_REQUEST", field: "limit" });
    expect(await refused({ op: "list", ns, topic: "t", limit: 1001 })).toEqual({ code: "TOO_LARGE", field: "limit" });
    expect((await ok({ op: "list", ns, topic: "t", limit: 1000 })).items).toEqual([]);
    expect((await ok({ op: "list", ns, topic: "t", limit: 999 })).items).toEqual([]);
    expect(await refused({ op: "list", ns, topic: "t", after: "nonsense" })).toEqual({ code: "BAD_REQUEST", field: "after" });
    expect(await refused({ op: "list", ns, topic: "t", after: 7 })).toEqual({ code: "BAD_REQUEST", field: "after" });
    // A ready cursor where only others are listed, and the other way round.
    expect(await refused({ op: "list", ns, topic: "t", state: "dead", after: "r.0.0.1" })).toEqual({ code: "BAD_REQUEST", field: "after" });
    expect(await refused({ op: "list", ns, topic: "t", state: "ready", after: "e.1" })).toEqual({ code: "BAD_REQUEST", field: "after" });
    // nil counts as absent.
    expect((await ok({ op: "list", ns, topic: "t", state: null, limit: null, after: null })).items).toEqual([]);
  });
});

describe("pause and resume", () => {
  test("a paused topic delivers nothing, shows in topics, and resume serves a parked dequeue", async () => {
    const ns = "ps-basic";
    expect(await ok({ op: "pause", ns, topic: "t" })).not.toHaveProperty("paused_until_ms");
    // Pausing before any item arrives creates the (empty) paused topic.
    expect(await topicEntry(ns, "t")).toEqual({ topic: "t", ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 0, paused: true });
    await ok({ op: "enqueue", ns, items: [{ topic: "t" }, { topic: "u" }] });
    const got = (await ok({ op: "dequeue", ns, topics: [{ topic: "t" }, { topic: "u" }] })).items as Array<{ topic: string }>;
    expect(got.map((d) => d.topic)).toEqual(["u"]);
    const parked = conn.call({ op: "dequeue", ns, topics: [{ topic: "t" }], wait_ms: 30_000 });
    // The ping after the parked dequeue is answered first: the dequeue is still waiting.
    expect((await ok({ op: "ping" })).now_ms).toBeGreaterThan(0);
    expect(await ok({ op: "resume", ns, topic: "t" })).toMatchObject({ resumed: true });
    const served = await parked;
    expect((served.items as unknown[]).length).toBe(1);
    expect(await ok({ op: "resume", ns, topic: "t" })).toMatchObject({ resumed: false });
    expect((await topicEntry(ns, "t"))?.paused).toBe(false);
  });

  test("for_ms: paused_until_ms in the reply and in topics; a second pause replaces the end", async () => {
    const ns = "ps-timed";
    const now = (await ok({ op: "ping" })).now_ms as number;
    const first = await ok({ op: "pause", ns, topic: "t", for_ms: 600_000 });
    const until = first.paused_until_ms as number;
    expect(until).toBeGreaterThanOrEqual(now + 600_000);
    expect(await topicEntry(ns, "t")).toMatchObject({ paused: true, paused_until_ms: until });
    const second = await ok({ op: "pause", ns, topic: "t" });
    expect(second).not.toHaveProperty("paused_until_ms");
    expect(await topicEntry(ns, "t")).not.toHaveProperty("paused_until_ms");
    await ok({ op: "resume", ns, topic: "t" });
    expect(await topicEntry(ns, "t")).toBeUndefined();
  });

  test("field errors: topic, for_ms (0, 1, the maximum, over it, not an integer)", async () => {
    const ns = "ps-errors";
    const yearMs = 365 * 24 * 60 * 60 * 1000;
    expect(await refused({ op: "pause", ns })).toEqual({ code: "BAD_REQUEST", field: "topic" });
    expect(await refused({ op: "resume", ns })).toEqual({ code: "BAD_REQUEST", field: "topic" });
    expect(await refused({ op: "pause", ns, topic: "x".repeat(256) })).toEqual({ code: "TOO_LARGE", field: "topic" });
    expect(await refused({ op: "resume", ns, topic: "" })).toEqual({ code: "BAD_REQUEST", field: "topic" });
    expect(await refused({ op: "pause", topic: "t" })).toEqual({ code: "BAD_REQUEST", field: "ns" });
    expect(await refused({ op: "pause", ns, topic: "t", for_ms: 0 })).toEqual({ code: "BAD_REQUEST", field: "for_ms" });
    expect(await refused({ op: "pause", ns, topic: "t", for_ms: -5 })).toEqual({ code: "BAD_REQUEST", field: "for_ms" });
    expect(await refused({ op: "pause", ns, topic: "t", for_ms: 2.5 })).toEqual({ code: "BAD_REQUEST", field: "for_ms" });
    expect(await refused({ op: "pause", ns, topic: "t", for_ms: "10" })).toEqual({ code: "BAD_REQUEST", field: "for_ms" });
    expect(await refused({ op: "pause", ns, topic: "t", for_ms: yearMs + 1 })).toEqual({ code: "BAD_REQUEST", field: "for_ms" });
    expect(await ok({ op: "pause", ns, topic: "t", for_ms: yearMs })).toHaveProperty("paused_until_ms");
    expect(await ok({ op: "pause", ns, topic: "t", for_ms: 1 })).toHaveProperty("paused_until_ms");
    expect(await ok({ op: "pause", ns, topic: "t", for_ms: null })).not.toHaveProperty("paused_until_ms");
    await ok({ op: "resume", ns, topic: "t" });
  });

  test("the TypeScript client's list, pause, resume and topics against the real server", async () => {
    const ns = "ps-client";
    const client = await OrqClient.connect({ port: server.port });
    try {
      const ids = await client.enqueue(ns, [{ topic: "t", priority: 2 }, { topic: "t", priority: 1 }, { topic: "t", delayMs: 60_000 }]);
      const { pausedUntilMs } = await client.pause(ns, "t", { forMs: 600_000 });
      expect(pausedUntilMs).toBeGreaterThan(0);
      expect((await client.topics(ns)).topics).toEqual([{ topic: "t", ready: 2, delayed: 1, waiting: 0, leased: 0, dead: 0, paused: true, pausedUntilMs: pausedUntilMs! }]);
      expect(await client.dequeue(ns, { topics: [{ topic: "t" }] })).toEqual([]);
      const first = await client.list(ns, "t", { limit: 2 });
      expect(first.items.map((s) => s.id)).toEqual([ids[1]!, ids[0]!]);
      const rest = await client.list(ns, "t", { limit: 2, after: first.next! });
      expect(rest).toMatchObject({ items: [{ id: ids[2]!, state: "delayed" }], next: null });
      expect(await client.resume(ns, "t")).toEqual({ resumed: true });
      expect((await client.dequeue(ns, { topics: [{ topic: "t" }] })).map((d) => d.id)).toEqual([ids[1]!]);
    } finally {
      await client.close();
    }
  });

  test("a pause survives a crash and restart of the server; resume is durable too", async () => {
    const ns = "ps-restart";
    await ok({ op: "enqueue", ns, items: [{ topic: "a" }, { topic: "b" }] });
    await ok({ op: "pause", ns, topic: "a" });
    const timed = (await ok({ op: "pause", ns, topic: "b", for_ms: 3_600_000 })).paused_until_ms;
    await ok({ op: "pause", ns, topic: "empty" });
    conn.close();
    await server.restart({ signal: "SIGKILL" });
    conn = await RawConnection.connect(server.port);
    expect(await topicEntry(ns, "a")).toMatchObject({ ready: 1, paused: true });
    expect(await topicEntry(ns, "b")).toMatchObject({ ready: 1, paused: true, paused_until_ms: timed });
    expect(await topicEntry(ns, "empty")).toMatchObject({ ready: 0, paused: true });
    expect((await ok({ op: "dequeue", ns, topics: [{ topic: "a" }, { topic: "b" }] })).items).toEqual([]);
    await ok({ op: "resume", ns, topic: "a" });
    conn.close();
    await server.restart({ signal: "SIGKILL" });
    conn = await RawConnection.connect(server.port);
    expect((await topicEntry(ns, "a"))?.paused).toBe(false);
    expect(((await ok({ op: "dequeue", ns, topics: [{ topic: "a" }, { topic: "b" }] })).items as unknown[]).length).toBe(1);
  });
});
