// Goal: against a real `orq serve` process (LMDB store, real engine):
// 1,000 pipelined requests all answered; a parked dequeue does not hold up a
// later ping; abuse (random bytes, truncated frames, huge lengths, non-map
// values, deep nesting, a client that never reads) gets its code while the
// server stays up and a bystander connection is unaffected.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Encoder } from "@msgpack/msgpack";
import { rawFrame, RawConnection } from "../support/raw-connection.ts";
import { ServerProcess } from "../support/server-process.ts";

const encoder = new Encoder();
let server: ServerProcess;
let bystander: RawConnection;

beforeAll(async () => {
  server = await ServerProcess.start();
  bystander = await RawConnection.connect(server.port);
  expect((await bystander.call({ op: "hello", protocol: 1 })).ok).toBe(true);
});

afterAll(async () => {
  bystander?.close();
  await server?.cleanup();
});

async function expectBystanderFine(): Promise<void> {
  expect((await bystander.call({ op: "ping" })).ok).toBe(true);
  expect(server.running).toBe(true);
}

describe("pipelining", () => {
  test("1,000 pipelined requests (enqueues and pings) are all answered; enqueue order kept", async () => {
    const conn = await RawConnection.connect(server.port);
    for (let i = 1; i <= 1000; i++) {
      if (i % 2 === 0) conn.send({ id: i, op: "ping" });
      else conn.send({ id: i, op: "enqueue", ns: "pipe", items: [{ topic: "t", payload: new Uint8Array([i & 0xff]) }] });
    }
    await conn.until(() => conn.replies.length >= 1000, "1000 replies");
    expect(new Set(conn.replies.map((r) => r.id)).size).toBe(1000);
    expect(conn.replies.every((r) => r.ok)).toBe(true);
    // Same priority: delivery follows enqueue order, which followed arrival order.
    const reply = await conn.call({ id: 2000, op: "dequeue", ns: "pipe", topics: [{ topic: "t", count: 500 }] });
    const firstBytes = (reply.items as Array<{ payload: Uint8Array }>).map((d) => d.payload[0]);
    expect(firstBytes).toEqual(Array.from({ length: 500 }, (_, k) => (2 * k + 1) & 0xff));
    conn.close();
  });

  test("a parked dequeue does not hold up a later ping; an enqueue wakes it", async () => {
    const conn = await RawConnection.connect(server.port);
    conn.send({ id: 1, op: "dequeue", ns: "ooo", topics: [{ topic: "t" }], wait_ms: 30_000 });
    await conn.call({ id: 2, op: "ping" });
    expect(conn.replies.map((r) => r.id)).toEqual([2]);
    await conn.call({ id: 3, op: "enqueue", ns: "ooo", items: [{ topic: "t" }] });
    const parked = await conn.reply(1);
    expect((parked.items as unknown[]).length).toBe(1);
    conn.close();
  });
});

describe("abuse", () => {
  test("random bytes: BAD_FRAME with id 0, then close", async () => {
    const conn = await RawConnection.connect(server.port);
    const noise = new Uint8Array(256);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 131 + 7) & 0xff;
    noise.set([0, 0, 0, 200, 0xc1], 0);
    conn.sendBytes(noise);
    await conn.waitClosed();
    expect(conn.replies[0]).toMatchObject({ id: 0, ok: false, error: { code: "BAD_FRAME" } });
    await expectBystanderFine();
  });

  test("huge length: FRAME_TOO_LARGE with id 0, then close", async () => {
    for (const length of [4 * 1024 * 1024 + 1, 0xffffffff]) {
      const conn = await RawConnection.connect(server.port);
      conn.sendBytes(rawFrame(length));
      await conn.waitClosed();
      expect(conn.replies[0]).toMatchObject({ id: 0, error: { code: "FRAME_TOO_LARGE" } });
    }
    await expectBystanderFine();
  });

  test("truncated frame then disconnect: nothing happens to anyone else", async () => {
    const conn = await RawConnection.connect(server.port);
    const body = encoder.encode({ id: 1, op: "enqueue", ns: "trunc", items: [{ topic: "t" }] });
    conn.sendBytes(rawFrame(body.length, body).subarray(0, body.length - 2));
    await expectBystanderFine();
    conn.close();
    await expectBystanderFine();
    const topics = await bystander.call({ op: "topics", ns: "trunc" });
    expect(topics.topics).toEqual([]);
  });

  test("non-map values and deep nesting: BAD_FRAME", async () => {
    const bodies = [encoder.encode([1, 2]), encoder.encode("hello"), encoder.encode(7), new Uint8Array(50_000).fill(0x91)];
    for (const body of bodies) {
      const conn = await RawConnection.connect(server.port);
      conn.sendBytes(rawFrame(body.length, body));
      await conn.waitClosed();
      expect(conn.replies[0]).toMatchObject({ id: 0, error: { code: "BAD_FRAME" } });
    }
    await expectBystanderFine();
  });

  test("bad requests keep the connection", async () => {
    const conn = await RawConnection.connect(server.port);
    expect((await conn.call({ id: 1, op: "nope" })).error!.code).toBe("UNKNOWN_OP");
    expect((await conn.call({ id: 2, op: "enqueue", ns: "x", items: [] })).error).toMatchObject({ code: "BAD_REQUEST", details: { field: "items" } });
    expect((await conn.call({ id: 3, op: "enqueue", ns: "x", items: [{ topic: "t", requires: { gpu: { near: 1 } } }] })).error!.code).toBe("BAD_REQUEST");
    expect((await conn.call({ id: 4, op: "enqueue", ns: "x", items: [{ topic: "t", after: ["0:999999"] }] })).error!.code).toBe("NOT_FOUND");
    expect((await conn.call({ id: 5, op: "dequeue", ns: "x", topics: [{ topic: "t", count: 1001 }] })).error!.code).toBe("TOO_LARGE");
    expect((await conn.call({ id: 6, op: "ping" })).ok).toBe(true);
    conn.close();
  });

  test("a client that never reads its replies does not stop the server or a bystander", async () => {
    const setup = await RawConnection.connect(server.port);
    const payload = new Uint8Array(10 * 1024).fill(1);
    const ids: string[] = [];
    for (let batch = 0; batch < 4; batch++) {
      const reply = await setup.call({ op: "enqueue", ns: "flood", items: Array.from({ length: 250 }, () => ({ topic: "t", payload })) });
      ids.push(...(reply.ids as string[]));
    }
    setup.close();
    const flooder = await RawConnection.connect(server.port);
    flooder.socket.pause(); // never reads: each get reply is ~10 MiB
    for (let i = 1; i <= 30; i++) flooder.send({ id: i, op: "get", ns: "flood", ids });
    for (let i = 0; i < 5; i++) await expectBystanderFine();
    const stats = await bystander.call({ op: "stats" });
    const unsent = (stats.server as { output_bytes_unsent: number }).output_bytes_unsent;
    expect(unsent).toBeLessThan(3 * 8 * 1024 * 1024); // bounded near the 8 MiB cap, not 300 MiB
    flooder.close();
    await expectBystanderFine();
  });
});
