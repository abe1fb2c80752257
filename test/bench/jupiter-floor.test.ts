// The Jupiter floor (bench/load/jupiter-floor.ts) answers the load
// generator's requests with the replies orq sent, by op and with the
// request's id: a real floor process, driven by the load generator's own
// connection (bench/load/orq-conn.ts).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Encoder } from "@msgpack/msgpack";
import { requestOp } from "../../bench/load/jupiter-floor.ts";
import { runJupiterFloor, type CapturedReplies } from "../../bench/load/jupiter.ts";
import { OrqConn, makeTemplate } from "../../bench/load/orq-conn.ts";
import { startJupiterFloorChild, type Child } from "../../bench/load/processes.ts";

const encoder = new Encoder();
const replies: CapturedReplies = {
  dequeue: encoder.encode({ id: 0x10000, ok: true, items: [{ id: "x", receipt: "r-1", payload: new Uint8Array(100).fill(7) }] }),
  ack: encoder.encode({ id: 0x10000, ok: true, acked: 1 }),
  ping: encoder.encode({ id: 0x10000, ok: true }),
};

describe("requestOp", () => {
  test("reads the op of a request laid out id first, op second", () => {
    const body = makeTemplate({ op: "dequeue", ns: "n" }).body;
    expect(requestOp(body, 0, body.length)).toBe("dequeue");
    const framed = new Uint8Array(body.length + 3);
    framed.set(body, 3);
    expect(requestOp(framed, 3, framed.length)).toBe("dequeue");
  });

  test("gives null for any other layout", () => {
    const opFirst = encoder.encode({ op: "ack", id: 0x10000 });
    expect(requestOp(opFirst, 0, opFirst.length)).toBeNull();
    const smallId = encoder.encode({ id: 1, op: "ack" });
    expect(requestOp(smallId, 0, smallId.length)).toBeNull();
    const body = makeTemplate({ op: "dequeue" }).body;
    expect(requestOp(body, 0, 14)).toBeNull();
  });
});

describe("the floor process", () => {
  let dir: string;
  let floor: Child | null = null;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "orq-jupiter-floor-"));
  });
  afterAll(async () => {
    await floor?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("answers each op with its reply under the request's id", async () => {
    const path = join(dir, "replies.msgpack");
    await Bun.write(path, encoder.encode(replies));
    floor = await startJupiterFloorChild(path, join(dir, "floor.log"));
    const conn = await OrqConn.connect(floor.host, floor.port);
    try {
      const [dequeued, acked, pinged] = await Promise.all([
        conn.call({ op: "dequeue", ns: "n", topics: [{ topic: "t", count: 1 }] }),
        conn.call({ op: "ack", ns: "n", receipts: ["r-1"] }),
        conn.call({ op: "ping" }),
      ]);
      expect(dequeued.id).not.toBe(acked.id);
      expect((dequeued.items as Array<{ receipt: string; payload: Uint8Array }>)[0]?.receipt).toBe("r-1");
      expect((dequeued.items as Array<{ payload: Uint8Array }>)[0]?.payload.length).toBe(100);
      expect(acked.acked).toBe(1);
      expect(pinged.ok).toBe(true);
      expect(Object.keys(pinged)).toEqual(["id", "ok"]);
    } finally {
      conn.close();
      await floor.stop();
      floor = null;
    }
  });

  test("runs the scenario's acquisitions and pings against it", async () => {
    const figures = await runJupiterFloor(replies, join(dir, "run.msgpack"), (path) => startJupiterFloorChild(path, join(dir, "run.log")), 0.2);
    expect(figures.acquisitionsPerS).toBeGreaterThan(0);
    expect(figures.pingPerS).toBeGreaterThan(0);
    expect(figures.ratio).toBeCloseTo(figures.acquisitionsPerS / figures.pingPerS, 9);
    expect(figures.clientCpuUsPerAcquisition).toBeGreaterThan(0);
  });
});
