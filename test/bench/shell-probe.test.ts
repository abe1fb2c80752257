// The shell probe (bench/shell-probe-main.ts) is orq's server with canned
// dequeue and ack answers. Its figures mean something only if it is what it
// says: the server's own shell (hello, decoding, errors) as shipped, and a
// dequeue and an ack that leave the stored items alone.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join, resolve } from "node:path";
import { ackHead, acquireOne } from "../../bench/load/jupiter-worker.ts";
import { OrqConn, makeTemplate } from "../../bench/load/orq-conn.ts";
import { ServerProcess } from "../support/server-process.ts";

const probeMain = join(resolve(import.meta.dir, "../.."), "bench/shell-probe-main.ts");
const ns = "sp";
let server: ServerProcess;
let conn: OrqConn;

beforeAll(async () => {
  server = await ServerProcess.start({ main: probeMain });
  conn = await OrqConn.connect(server.host, server.port);
});
afterAll(async () => {
  conn.close();
  await server.cleanup();
});

describe("the shell probe", () => {
  test("answers a dequeue with one canned delivery and leaves the stored item ready", async () => {
    const enqueued = await conn.call({ op: "enqueue", ns, items: [{ topic: "t", payload: new Uint8Array([1, 2, 3]) }] });
    const [storedId] = enqueued.ids as string[];

    const reply = await conn.call({ op: "dequeue", ns, topics: [{ topic: "t", count: 5 }], capabilities: { pool: "a" }, wait_ms: 0 });
    const items = reply.items as Array<{ id: string; topic: string; payload: Uint8Array; attempt: number; receipt: string }>;
    expect(items.length).toBe(1);
    const [delivery] = items;
    expect(delivery!.id).not.toBe(storedId);
    expect(delivery!.topic).toBe("t");
    expect(delivery!.payload.length).toBe(100);
    expect(delivery!.attempt).toBe(1);
    expect(delivery!.receipt.startsWith(`${delivery!.id}:`)).toBe(true);

    const acked = await conn.call({ op: "ack", ns, receipts: [delivery!.receipt] });
    expect(acked.acked).toBe(1);
    // Nothing reached the engine: the stored item was neither leased nor ended.
    const states = await conn.call({ op: "get", ns, ids: [storedId] });
    expect((states.items as Array<{ state: string }>)[0]!.state).toBe("ready");
  });

  test("the scenario's worker acquires through it", async () => {
    const dequeue = makeTemplate({ op: "dequeue", ns, topics: [{ topic: "t", count: 1 }], capabilities: { pool: "a" }, wait_ms: 0 });
    expect(await acquireOne(conn, dequeue, ackHead(ns))).toBe(true);
  });

  test("still decodes and refuses a bad dequeue as the shipped server does", async () => {
    await expect(conn.call({ op: "dequeue", ns, topics: [], wait_ms: 0 })).rejects.toThrow("BAD_REQUEST: topics");
  });
});
