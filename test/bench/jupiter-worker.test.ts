// The Jupiter scenario's lean worker (bench/load/jupiter-worker.ts) against a
// real orq process: it acks exactly what it was delivered (the server's own
// stats say so), stops when its kind's items are used up, and turns error
// replies into rejections.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ackHead, acquireOne, pingOnce } from "../../bench/load/jupiter-worker.ts";
import { OrqConn, makeTemplate } from "../../bench/load/orq-conn.ts";
import { ServerProcess } from "../support/server-process.ts";

const ns = "jw";
let server: ServerProcess;
let conn: OrqConn;

beforeAll(async () => {
  server = await ServerProcess.start();
  conn = await OrqConn.connect(server.host, server.port);
});
afterAll(async () => {
  conn.close();
  await server.cleanup();
});

function dequeueFor(pool: string) {
  return makeTemplate({ op: "dequeue", ns, topics: [{ topic: "t", count: 1 }], capabilities: { pool }, wait_ms: 0 });
}

describe("acquireOne", () => {
  test("acks each item it is delivered, then reports none left", async () => {
    const items = Array.from({ length: 6 }, (_, i) => ({ topic: "t", payload: new Uint8Array([i]), requires: { pool: i < 4 ? "a" : "b" } }));
    const enqueued = await conn.call({ op: "enqueue", ns, items });
    expect((enqueued.ids as string[]).length).toBe(6);

    const dequeueA = dequeueFor("a");
    const ack = ackHead(ns);
    const results = await Promise.all(Array.from({ length: 6 }, () => acquireOne(conn, dequeueA, ack)));
    // Four items require pool a: four acquisitions, and the other two found nothing.
    expect(results.filter((acked) => acked).length).toBe(4);
    expect(await acquireOne(conn, dequeueA, ack)).toBe(false);

    // The server agrees: pool a's four ended acked (not left leased),
    const ids = enqueued.ids as string[];
    const states = await conn.call({ op: "get", ns, ids });
    const outcomes = (states.items as Array<{ state: string; outcome?: string }>).map((item) => item.outcome ?? item.state);
    expect(outcomes).toEqual(["acked", "acked", "acked", "acked", "ready", "ready"]);
    // pool b's two are still ready (and nothing of pool a's is left to deliver).
    const left = await conn.call({ op: "dequeue", ns, topics: [{ topic: "t", count: 10 }], capabilities: { pool: "b" }, wait_ms: 0 });
    const payloads = (left.items as Array<{ payload: Uint8Array }>).map((item) => item.payload[0]);
    expect(payloads.sort()).toEqual([4, 5]);
  });

  test("rejects with the server's error code", async () => {
    const badNamespace = makeTemplate({ op: "dequeue", ns: "", topics: [{ topic: "t", count: 1 }], wait_ms: 0 });
    await expect(acquireOne(conn, badNamespace, ackHead(ns))).rejects.toThrow("BAD_REQUEST: ns");
  });

  test("rejects when the ack does not ack the receipt", async () => {
    await conn.call({ op: "enqueue", ns, items: [{ topic: "u", payload: new Uint8Array(1) }] });
    const dequeueU = makeTemplate({ op: "dequeue", ns, topics: [{ topic: "u", count: 1 }], wait_ms: 0 });
    // An ack in another namespace finds no such receipt: acked 0, the receipt stale.
    await expect(acquireOne(conn, dequeueU, ackHead("elsewhere"))).rejects.toThrow("ack answered acked 0");
  });
});

describe("pingOnce", () => {
  test("resolves on the server's ok", async () => {
    await pingOnce(conn, makeTemplate({ op: "ping" }));
    expect(conn.inFlight).toBe(0);
  });
});
