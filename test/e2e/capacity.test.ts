// Goal: the live-item, topic and namespace maxima against a real `orq serve`
// given small maxima in its config file (live_items_max, topics_max,
// namespaces_max): each refusal is TOO_LARGE with the contract's
// details.field, nothing of a refused batch is stored (stats and a dequeue
// of every topic show only what was accepted), and the numbers in force are
// in stats. Then a server started with a lower maximum on a data dir that
// holds more items starts, serves them all, and refuses new items until the
// count is under it.

import { afterEach, describe, expect, test } from "bun:test";
import { RawConnection, type ReplyMap } from "../support/raw-connection.ts";
import { ServerProcess } from "../support/server-process.ts";

const servers: ServerProcess[] = [];
const conns: RawConnection[] = [];

afterEach(async () => {
  for (const conn of conns.splice(0)) conn.close();
  for (const server of servers.splice(0).reverse()) await server.cleanup();
});

async function start(config: Record<string, unknown>, dataDir?: string): Promise<RawConnection> {
  const server = await ServerProcess.start({ config, ...(dataDir === undefined ? {} : { dataDir }) });
  servers.push(server);
  const conn = await RawConnection.connect(server.port);
  conns.push(conn);
  return conn;
}

function items(...topics: string[]): Array<Record<string, unknown>> {
  return topics.map((topic) => ({ topic, payload: new TextEncoder().encode(topic) }));
}

function refusal(reply: ReplyMap): { code: string; field: unknown } {
  expect(reply.ok).toBe(false);
  return { code: reply.error!.code, field: reply.error!.details?.field };
}

async function engineGauges(conn: RawConnection): Promise<{ items: number; topics: number; namespaces: number }> {
  const reply = await conn.call({ op: "stats" });
  expect(reply.ok).toBe(true);
  return reply.engine as { items: number; topics: number; namespaces: number };
}

async function takeAll(conn: RawConnection, ns: string, topics: string[]): Promise<string[]> {
  const reply = await conn.call({ op: "dequeue", ns, topics: topics.map((topic) => ({ topic, count: 100 })) });
  expect(reply.ok).toBe(true);
  return (reply.items as Array<{ topic: string; receipt: string }>).map((d) => d.topic);
}

describe("live items, topics and namespaces maxima (config file)", () => {
  test("TOO_LARGE with the field, and nothing of the refused batch stored", async () => {
    const conn = await start({ live_items_max: 4, topics_max: 2, namespaces_max: 1 });
    expect((await conn.call({ op: "enqueue", ns: "n", items: items("a", "a") })).ok).toBe(true);
    expect(refusal(await conn.call({ op: "enqueue", ns: "n", items: items("b", "a", "a") }))).toEqual({ code: "TOO_LARGE", field: "items" });
    expect(await engineGauges(conn)).toEqual(expect.objectContaining({ items: 2, topics: 1, namespaces: 1 }));
    expect((await conn.call({ op: "enqueue", ns: "n", items: items("b") })).ok).toBe(true);
    // Room for two items, but "c" would be a third topic.
    const [first] = (await conn.call({ op: "dequeue", ns: "n", topics: [{ topic: "a" }] })).items as Array<{ receipt: string }>;
    expect((await conn.call({ op: "ack", ns: "n", receipts: [first!.receipt] })).ok).toBe(true);
    expect(refusal(await conn.call({ op: "enqueue", ns: "n", items: items("b", "c") }))).toEqual({ code: "TOO_LARGE", field: "items[1].topic" });
    expect(refusal(await conn.call({ op: "pause", ns: "n", topic: "c" }))).toEqual({ code: "TOO_LARGE", field: "topic" });
    expect(refusal(await conn.call({ op: "enqueue", ns: "m", items: items("a") }))).toEqual({ code: "TOO_LARGE", field: "ns" });
    expect(await engineGauges(conn)).toEqual(expect.objectContaining({ items: 2, topics: 2, namespaces: 1 }));
    expect((await takeAll(conn, "n", ["a", "b", "c"])).sort()).toEqual(["a", "b"]);
  });

  test("a server started with a lower maximum on a fuller data dir serves every item and refuses new ones", async () => {
    const first = await start({});
    expect((await first.call({ op: "enqueue", ns: "n", items: items("a", "a", "a", "b", "b") })).ok).toBe(true);
    const dataDir = servers[0]!.dataDir;
    first.close();
    conns.splice(0);
    expect(await servers[0]!.stop()).toBe(0);

    const conn = await start({ live_items_max: 3 }, dataDir);
    expect((await engineGauges(conn)).items).toBe(5);
    expect(refusal(await conn.call({ op: "enqueue", ns: "n", items: items("a") }))).toEqual({ code: "TOO_LARGE", field: "items" });
    const reply = await conn.call({ op: "dequeue", ns: "n", topics: [{ topic: "a", count: 10 }, { topic: "b", count: 10 }] });
    const delivered = reply.items as Array<{ topic: string; receipt: string }>;
    expect(delivered.map((d) => d.topic).sort()).toEqual(["a", "a", "a", "b", "b"]);
    // Acking two leaves 3 (at the maximum); a third leaves room for one.
    expect((await conn.call({ op: "ack", ns: "n", receipts: delivered.slice(0, 2).map((d) => d.receipt) })).ok).toBe(true);
    expect(refusal(await conn.call({ op: "enqueue", ns: "n", items: items("a") }))).toEqual({ code: "TOO_LARGE", field: "items" });
    expect((await conn.call({ op: "ack", ns: "n", receipts: [delivered[2]!.receipt] })).ok).toBe(true);
    expect((await conn.call({ op: "enqueue", ns: "n", items: items("a") })).ok).toBe(true);
    expect(refusal(await conn.call({ op: "enqueue", ns: "n", items: items("a") }))).toEqual({ code: "TOO_LARGE", field: "items" });
  });
});
